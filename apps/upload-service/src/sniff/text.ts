import {
  afterBom,
  hasAsciiCaselessAt,
  indexOfAsciiCaseless,
  isAsciiWhitespace,
  skipWhitespace,
} from './bytes';
import type { ContentSample } from './collector';

/** What a text file is: plain text, markup a browser would render, or a script for a shell. */
export type TextKind = 'text' | 'html' | 'script';

/**
 * Openings that make a browser render a text file as HTML (the HTML signatures of the WHATWG MIME
 * Sniffing standard, plus `<svg`), each followed by a tag-ending byte. Lower-case.
 */
const MARKUP_TAGS = [
  '<!doctype html',
  '<html',
  '<head',
  '<body',
  '<script',
  '<iframe',
  '<svg',
  '<h1',
  '<div',
  '<font',
  '<table',
  '<a',
  '<style',
  '<title',
  '<b',
  '<br',
  '<p',
];
const COMMENT_OPENING = '<!--';
/** Prologues after which an SVG or XHTML root may follow. */
const PROLOGUES = ['<?xml', '<!doctype'];
const ROOTS_AFTER_PROLOGUE = ['<svg', '<html'];

/** A byte that ends a tag name: whitespace, `>`, `/`, or the end of the sample. */
function endsTagName(byte: number | undefined): boolean {
  return byte === undefined || byte === 0x3e || byte === 0x2f || isAsciiWhitespace(byte);
}

function opensWithTag(head: Uint8Array, at: number): boolean {
  return MARKUP_TAGS.some((tag) => hasAsciiCaselessAt(head, at, tag) && endsTagName(head[at + tag.length]));
}

/** A prologue, then an SVG or HTML element anywhere in the head: comments and DTDs may come first. */
function opensWithRootAfterPrologue(head: Uint8Array, at: number): boolean {
  if (!PROLOGUES.some((prologue) => hasAsciiCaselessAt(head, at, prologue))) return false;
  return ROOTS_AFTER_PROLOGUE.some((root) => indexOfAsciiCaseless(head, root, at, head.length) !== -1);
}

/**
 * The first content, after an optional BOM and any whitespace in the head, opens an HTML
 * document, an SVG image, or an XML or DOCTYPE prologue followed in the head by one of those roots.
 */
export function opensAsMarkup(head: Uint8Array): boolean {
  const at = skipWhitespace(head, afterBom(head));
  return (
    hasAsciiCaselessAt(head, at, COMMENT_OPENING) ||
    opensWithTag(head, at) ||
    opensWithRootAfterPrologue(head, at)
  );
}

/** A `#!` interpreter line at the very start (after an optional BOM). */
export function opensAsScript(head: Uint8Array): boolean {
  const at = afterBom(head);
  return head[at] === 0x23 && head[at + 1] === 0x21;
}

/** JSON as attachments take it: an object or an array, after an optional BOM and whitespace. */
export function opensAsJsonContainer(head: Uint8Array): boolean {
  const first = head[skipWhitespace(head, afterBom(head))];
  return first === 0x7b || first === 0x5b;
}

/** The kind of a text sample, or undefined when the file is not text throughout. */
export function detectText(sample: ContentSample): TextKind | undefined {
  if (!sample.isText) return undefined;
  if (opensAsScript(sample.head)) return 'script';
  if (opensAsMarkup(sample.head)) return 'html';
  return 'text';
}
