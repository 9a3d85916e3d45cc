import { textLike } from './text-like';

/** One line: line breaks of converted values become spaces. */
export const singleLineText = textLike('single_line_text', (from) =>
  from.text === undefined ? null : `regexp_replace(${from.text}, '[\\r\\n]+', ' ', 'g')`,
);
