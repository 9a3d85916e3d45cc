import { textValuePatterns } from '@recordbase/contracts/fields';
import { textLike, validatedFrom } from './text-like';

export const url = textLike('url', validatedFrom('url', textValuePatterns.url));
