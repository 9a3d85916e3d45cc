import { RecordbaseClient, type RecordbaseClientOptions } from '@recordbase/client';
import type { Stack } from './stack';

/** The typed client pointed at a stack's records-api and upload-service, with its root key. */
export function clientOf(stack: Stack, options: Partial<RecordbaseClientOptions> = {}): RecordbaseClient {
  return new RecordbaseClient({
    apiUrl: stack.apiUrl,
    uploadUrl: `http://127.0.0.1:${stack.ports['upload-service']}`,
    apiKey: stack.rootKey,
    ...options,
  });
}
