import { CSV_MIME_TYPE, isSupportedAttachmentMimeType, XLSX_MIME_TYPE } from '@recordbase/contracts/uploads';
import type { DetectedContent } from './detect';
import { opensAsJsonContainer } from './text';

/**
 * What each upload route accepts, judged from the client's word (declared type, file name) and
 * the detector's verdict on the bytes. A refusal's reason is a sentence for the 400 answer.
 */

export type Judgement = { ok: true; mimeType: string } | { ok: false; reason: string };

export interface UploadedFile {
  /** The file part's Content-Type as the client sent it; parameters and case are ignored. */
  declaredType?: string | undefined;
  fileName?: string | undefined;
  detected: DetectedContent;
}

export interface UploadedAttachment extends UploadedFile {
  /** The sample's head: a file declared application/json must open with `{` or `[`. */
  head: Uint8Array;
}

const CONTENT_NAMES: Readonly<Record<DetectedContent, string>> = {
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
  'image/gif': 'a GIF image',
  'image/webp': 'a WebP image',
  'application/pdf': 'a PDF document',
  'audio/mpeg': 'MP3 audio',
  'video/mp4': 'an MP4 video',
  'application/zip': 'a ZIP archive',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'a Word document (docx)',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'an Excel workbook (xlsx)',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation':
    'a PowerPoint presentation (pptx)',
  text: 'plain text',
  html: 'HTML',
  script: 'a script (it starts with #!)',
  unknown: 'neither UTF-8 text nor a recognised format',
};

const GENERIC_TYPE = 'application/octet-stream';
const JSON_TYPE = 'application/json';
const PLAIN_TEXT_TYPE = 'text/plain';
/** Echoed client values are cut to this length, so a reason stays a sentence. */
const MAX_ECHOED_LENGTH = 100;

function accept(mimeType: string): Judgement {
  return { ok: true, mimeType };
}

function refuse(reason: string): Judgement {
  return { ok: false, reason };
}

/** The bare type of a Content-Type value, lower-cased; undefined when absent or empty. */
export function normalizeMimeType(value: string | undefined): string | undefined {
  const bare = value?.split(';', 1)[0]?.trim().toLowerCase();
  return bare ? bare : undefined;
}

/** A client value, quoted and cut short. */
function quote(value: string): string {
  const cut = value.length > MAX_ECHOED_LENGTH ? `${value.slice(0, MAX_ECHOED_LENGTH)}…` : value;
  return JSON.stringify(cut);
}

function declaredAs(declared: string | undefined): string {
  return declared === undefined ? 'declared with no type' : `declared ${quote(declared)}`;
}

function hasExtension(fileName: string | undefined, extension: string): boolean {
  return fileName?.toLowerCase().endsWith(extension) ?? false;
}

const SUPPORTED_LIST =
  'PNG, JPEG, GIF or WebP images, PDF, plain text, CSV, JSON, ZIP, Word, Excel or PowerPoint files, MP3 audio or MP4 video';

/**
 * Text is stored as the text type it was declared as, as text/plain when the declaration is
 * generic or another text type, and refused when it claims a non-text type.
 */
function judgeTextAttachment(file: UploadedAttachment): Judgement {
  const declared = normalizeMimeType(file.declaredType);
  if (declared === JSON_TYPE) {
    return opensAsJsonContainer(file.head)
      ? accept(JSON_TYPE)
      : refuse('The file was declared application/json, but its content does not start with { or [.');
  }
  if (declared === PLAIN_TEXT_TYPE || declared === CSV_MIME_TYPE) return accept(declared);
  if (declared === undefined || declared === GENERIC_TYPE || declared.startsWith('text/')) {
    return accept(PLAIN_TEXT_TYPE);
  }
  return refuse(`The file's content is plain text, but it was ${declaredAs(declared)}.`);
}

/**
 * fileupload: a supported binary type found in the bytes is stored as that type, whatever was
 * declared; text follows its declaration; HTML, scripts and anything unrecognised are refused
 * whatever their name or declared type.
 */
export function judgeAttachment(file: UploadedAttachment): Judgement {
  const { detected } = file;
  if (detected === 'text') return judgeTextAttachment(file);
  if (detected !== 'html' && detected !== 'script' && isSupportedAttachmentMimeType(detected)) {
    return accept(detected);
  }
  return refuse(
    `The file's content is ${CONTENT_NAMES[detected]}, which is not accepted as an attachment; ` +
      `attachments may be ${SUPPORTED_LIST}.`,
  );
}

/** csvupload: declared text/csv or named *.csv, and UTF-8 text throughout; stored as text/csv. */
export function judgeCsv(file: UploadedFile): Judgement {
  const declared = normalizeMimeType(file.declaredType);
  if (declared !== CSV_MIME_TYPE && !hasExtension(file.fileName, '.csv')) {
    return refuse(
      `A CSV upload must be declared text/csv or have a file name ending in .csv; this one was ` +
        `${declaredAs(declared)} and named ${quote(file.fileName ?? '')}.`,
    );
  }
  if (file.detected === 'unknown') {
    return refuse('A CSV upload must be UTF-8 text without NUL bytes; save the file as "CSV UTF-8".');
  }
  if (file.detected !== 'text') {
    return refuse(
      `A CSV upload must be UTF-8 text, but the file's content is ${CONTENT_NAMES[file.detected]}.`,
    );
  }
  return accept(CSV_MIME_TYPE);
}

/** xlsxupload: declared as .xlsx, named *.xlsx, and a ZIP whose parts make an Excel workbook. */
export function judgeXlsx(file: UploadedFile): Judgement {
  const declared = normalizeMimeType(file.declaredType);
  if (declared !== XLSX_MIME_TYPE) {
    return refuse(
      `An Excel upload must be declared ${XLSX_MIME_TYPE}; this one was ${declaredAs(declared)}.`,
    );
  }
  if (!hasExtension(file.fileName, '.xlsx')) {
    return refuse(
      `An Excel upload's file name must end in .xlsx; this one is ${quote(file.fileName ?? '')}.`,
    );
  }
  if (file.detected === 'application/zip') {
    return refuse('The file is a ZIP archive but not an Excel workbook: it has no xl/workbook.xml.');
  }
  if (file.detected !== XLSX_MIME_TYPE) {
    return refuse(
      `The file's content is ${CONTENT_NAMES[file.detected]}, not an Excel workbook (a ZIP archive with xl/workbook.xml).`,
    );
  }
  return accept(XLSX_MIME_TYPE);
}
