import {
  ContentCollector,
  type DetectedContent,
  detectContent,
  type Judgement,
  judgeAttachment as judgeAttachmentContent,
  judgeCsv as judgeCsvContent,
  judgeXlsx as judgeXlsxContent,
} from '../sniff';

/** The upload routes' view of the sniffer: sample while streaming, then judge once stored. */

export interface ContentVerdict {
  detected: DetectedContent;
  /** The first bytes, which some rules look at (a JSON file opens with `{` or `[`). */
  head: Uint8Array;
}

export interface DeclaredFile {
  declaredType: string;
  fileName: string;
}

export function createContentInspector() {
  const collector = new ContentCollector();
  return {
    push: (chunk: Uint8Array) => collector.push(chunk),
    finish(): ContentVerdict {
      const sample = collector.finish();
      return { detected: detectContent(sample), head: sample.head };
    },
  };
}

export const judgeAttachment = (file: DeclaredFile, content: ContentVerdict): Judgement =>
  judgeAttachmentContent({ ...file, detected: content.detected, head: content.head });
export const judgeCsv = (file: DeclaredFile, content: ContentVerdict): Judgement =>
  judgeCsvContent({ ...file, detected: content.detected });
export const judgeXlsx = (file: DeclaredFile, content: ContentVerdict): Judgement =>
  judgeXlsxContent({ ...file, detected: content.detected });
