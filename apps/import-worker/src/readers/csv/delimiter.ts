const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const TAB = 0x09;
const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** In order of preference when the evidence ties. */
const CANDIDATES = [COMMA, SEMICOLON, TAB] as const;
const LINES_LOOKED_AT = 20;

/**
 * The delimiter of a CSV file, told from its first lines: the candidate (comma, semicolon, tab)
 * that the header line holds and that the most lines hold as often as the header does; comma when
 * the header holds none. Only characters outside quotes count, so "a, b" in quotes does not vote
 * for comma, and a semicolon file with decimal commas ("1,5") is still told apart by its header.
 * Without `complete`, the sample's unfinished last line is left out unless it is the only one.
 */
export function detectDelimiter(sample: string, complete: boolean): number {
  const lines: number[][] = [];
  let counts = [0, 0, 0];
  let inQuotes = false;
  let lineHasText = false;
  for (let i = 0; i < sample.length && lines.length < LINES_LOOKED_AT; i += 1) {
    const c = sample.charCodeAt(i);
    if (c === QUOTE) inQuotes = !inQuotes;
    else if (inQuotes) continue;
    else if (c === LF || c === CR) {
      if (lineHasText) lines.push(counts);
      counts = [0, 0, 0];
      lineHasText = false;
      continue;
    } else {
      const candidate = CANDIDATES.indexOf(c as (typeof CANDIDATES)[number]);
      if (candidate !== -1) counts[candidate] = (counts[candidate] as number) + 1;
    }
    lineHasText = true;
  }
  if (lineHasText && lines.length < LINES_LOOKED_AT && (complete || lines.length === 0)) lines.push(counts);

  const header = lines[0];
  if (header === undefined) return COMMA;
  let best: number = COMMA;
  let bestAgreeing = 0;
  let bestInHeader = 0;
  CANDIDATES.forEach((candidate, index) => {
    const inHeader = header[index] as number;
    if (inHeader === 0) return;
    const agreeing = lines.filter((line) => line[index] === inHeader).length;
    if (agreeing > bestAgreeing || (agreeing === bestAgreeing && inHeader > bestInHeader)) {
      best = candidate;
      bestAgreeing = agreeing;
      bestInHeader = inHeader;
    }
  });
  return best;
}
