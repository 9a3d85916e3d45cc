/**
 * The file readers of imports: the rows of an uploaded CSV or XLSX file as it streams from
 * storage, each a row number and its cells as text. A file that cannot be imported fails with an
 * ImportFileError whose message says why; any other error is the system's (storage, disk).
 */
export { readCsv } from './csv/read-csv';
export { ImportFileError } from './import-file-error';
export { DEFAULT_READER_LIMITS, type ImportRow, type ReaderLimits } from './types';
export { readXlsx, type XlsxOptions } from './xlsx/read-xlsx';
