import { randomUUID } from 'node:crypto';

/**
 * Storage keys are generated, never taken from the client: a kind, the database (for
 * attachments), a random id, and the uploaded name made safe. The original name is kept as data in
 * uploaded_files and given back in Content-Disposition on download.
 */

const MAX_NAME_IN_KEY = 100;

/** A name reduced to what a key segment allows: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export function safeFileName(original: string): string {
  const base = original.split(/[/\\]/).pop() ?? '';
  const safe = base
    // Letters keep their base: é is e and a combining accent, which is dropped.
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, MAX_NAME_IN_KEY);
  return safe.length > 0 ? safe : 'file';
}

export type UploadKind = 'attachment' | 'import';

export function newStorageKey(kind: UploadKind, originalName: string, databaseId?: string): string {
  const name = safeFileName(originalName);
  return kind === 'attachment'
    ? `attachments/${databaseId}/${randomUUID()}/${name}`
    : `imports/${randomUUID()}/${name}`;
}
