import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';
import { count, ImportFileError } from '../import-file-error';
import { damaged } from './errors';

/** What a part's reader does with its elements; names come without namespace prefix. */
export interface XmlHandler {
  open(name: string, attributes: Readonly<Record<string, string>>): void;
  text(text: string): void;
  close(name: string): void;
}

/**
 * Parses one XML part chunk by chunk, calling `handler` as elements open and close. It yields
 * after each chunk so the caller can hand out what the handler gathered, and so the next chunk is
 * inflated only when asked for. Malformed XML fails as a damaged workbook.
 *
 * saxes gathers a text node, attribute value, comment or CDATA section whole before passing it
 * on; `maxTextLength` bounds that, so one huge text node cannot take memory the inflate budget
 * would allow (a gigabyte).
 */
export async function* parseXmlPart(
  part: string,
  chunks: AsyncIterable<Buffer>,
  handler: XmlHandler,
  maxTextLength: number,
): AsyncGenerator<void, void, undefined> {
  const parser = new SaxesParser({ position: false });
  let malformed: Error | null = null;
  parser.on('error', (error) => {
    malformed ??= error;
  });
  parser.on('opentag', (tag) => handler.open(localName(tag.name), tag.attributes as Record<string, string>));
  parser.on('text', (text) => handler.text(text));
  parser.on('cdata', (text) => handler.text(text));
  parser.on('closetag', (tag) => handler.close(localName(tag.name)));
  const decoder = new StringDecoder('utf8');
  const write = (text: string | null) => {
    // Handlers throw ImportFileErrors of their own; they pass through saxes untouched.
    if (text === null) parser.close();
    else parser.write(text);
    if (malformed !== null) throw damaged(`${part} is not well-formed XML (${(malformed as Error).message})`);
    if (pendingTextLength(parser) > maxTextLength) {
      throw new ImportFileError(
        `the workbook holds a text of more than ${count(maxTextLength)} characters in ${part}`,
        null,
      );
    }
  };
  for await (const chunk of chunks) {
    write(decoder.write(chunk));
    yield;
  }
  write(decoder.end());
  write(null);
}

/** Parses a whole part for what `handler` gathers. */
export async function readXmlPart(
  part: string,
  chunks: AsyncIterable<Buffer>,
  handler: XmlHandler,
  maxTextLength: number,
): Promise<void> {
  for await (const _ of parseXmlPart(part, chunks, handler, maxTextLength)) {
    // The handler gathers as the parts go by.
  }
}

/** 'x:row' → 'row': some writers prefix SpreadsheetML's elements. */
export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/**
 * What saxes holds while it waits for the end of a token. saxes has no option for this; its
 * `text` (text, attribute values, comments, CDATA) and `name` fields are read as they are in
 * saxes 6, and a change there shows as a failing test of a huge text node.
 */
function pendingTextLength(parser: SaxesParser): number {
  const internals = parser as unknown as { text?: string; name?: string };
  return (internals.text?.length ?? 0) + (internals.name?.length ?? 0);
}
