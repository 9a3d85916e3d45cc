import { textLike } from './text-like';

export const longText = textLike('long_text', (from) => from.text ?? null);
