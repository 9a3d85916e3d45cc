import { ImportFileError } from '../import-file-error';

export function notAWorkbook(detail: string): ImportFileError {
  return new ImportFileError(`not an Excel workbook (${detail})`, null);
}

/** A workbook whose parts cannot be read as they should. */
export function damaged(detail: string): ImportFileError {
  return new ImportFileError(`the Excel workbook is damaged: ${detail}`, null);
}

/** Text quoted from a file or library in a message, cut short: a hostile file can make it huge. */
export function shown(text: string, length = 100): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

export function messageOf(error: unknown): string {
  return shown(error instanceof Error ? error.message : String(error), 200);
}
