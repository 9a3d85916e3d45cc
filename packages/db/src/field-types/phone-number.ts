import { textValuePatterns } from '@recordbase/contracts/fields';
import { textLike, validatedFrom } from './text-like';

export const phoneNumber = textLike(
  'phone_number',
  validatedFrom('phone_number', textValuePatterns.phone_number),
);
