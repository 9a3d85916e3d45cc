/** Joins a root URL and path segments, each segment escaped (table names may hold `/` or `?`). */
export function joinUrl(root: string, ...segments: (string | number)[]): string {
  const trimmed = root.replace(/\/+$/, '');
  return [trimmed, ...segments.map((segment) => encodeURIComponent(String(segment)))].join('/');
}

/** Adds repeated query parameters (`?fields=A&fields=B`), leaving out the undefined ones. */
export function withQuery(
  url: string,
  query: Record<string, string | number | boolean | readonly string[] | undefined>,
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `${url}?${text}` : url;
}
