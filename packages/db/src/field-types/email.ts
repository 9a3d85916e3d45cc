import { textValuePatterns } from '@recordbase/contracts/fields';
import { textLike, validatedFrom } from './text-like';

export const email = textLike('email', validatedFrom('email', textValuePatterns.email));
