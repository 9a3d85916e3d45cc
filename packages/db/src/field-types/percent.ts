import { numeric } from './numeric';
import { numberFromText } from './text-cells';

/** A fraction: 0.5 is 50%, and so is the imported text "50%". */
export const percent = numeric('percent', {
  fromText: (text) => {
    const trimmed = text.trim();
    if (!trimmed.endsWith('%')) return numberFromText(trimmed);
    const hundredths = numberFromText(trimmed.slice(0, -1));
    return hundredths === undefined ? undefined : hundredths / 100;
  },
});
