/** The URL without its trailing slashes (a loop: `/\/+$/` backtracks quadratically on many slashes). */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end -= 1;
  return url.slice(0, end);
}

/** Joins a root URL and path segments, each segment escaped (table names may hold `/` or `?`). */
export function joinUrl(root: string, ...segments: (string | number)[]): string {
  const trimmed = withoutTrailingSlashes(root);
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
