/**
 * Judging an upload's type from its bytes while it streams: the collector keeps a bounded sample,
 * the detector names the content, and the policy of each upload route accepts or refuses it.
 *
 *   const collector = new ContentCollector();
 *   await pipeline(upload, sniffingStream(collector), storageWriteStream);
 *   const sample = collector.finish();
 *   const verdict = judgeAttachment({ declaredType, fileName, detected: detectContent(sample), head: sample.head });
 *
 * Decisions where the formats leave room (the tests pin each one):
 * - video/mp4 is an `ftyp` box whose major brand is of the MP4 family, or whose major brand is
 *   not another type's and which lists an MP4 brand as compatible. QuickTime (`qt  `), M4A/M4B
 *   audio, HEIF/AVIF images and 3GPP are not video/mp4, whatever they list.
 * - audio/mpeg is an ID3v2 tag, or Layer III frames from byte 0 confirmed by a second frame.
 * - Text that starts with `#!` (after an optional BOM) is a script and refused like HTML.
 * - HTML is text whose first content (after BOM and whitespace) opens with an HTML signature of
 *   WHATWG MIME Sniffing, `<svg`, or an XML/DOCTYPE prologue with `<svg`/`<html` in the head.
 * - A ZIP needs both ends: a local header (or an empty archive's end record) first and an end
 *   record last. A truncated archive is `unknown`; an archive naming the main parts of two
 *   Office types is a plain ZIP; part names match regardless of case.
 * - An empty file is text.
 */
export {
  ContentCollector,
  type ContentSample,
  HEAD_BYTES,
  sampleOf,
  sniffingStream,
  TAIL_BYTES,
} from './collector';
export { type DetectedBinaryType, type DetectedContent, detectContent } from './detect';
export {
  type Judgement,
  judgeAttachment,
  judgeCsv,
  judgeXlsx,
  normalizeMimeType,
  type UploadedAttachment,
  type UploadedFile,
} from './policy';
export { DOCX_MIME_TYPE, PPTX_MIME_TYPE } from './zip';
