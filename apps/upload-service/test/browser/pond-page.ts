/**
 * The page a customer writes: a file input turned into a FilePond widget that posts to the upload
 * service, FilePond's default process request (the file and a metadata part, both `filepond`).
 * What FilePond reports is kept on `window.pondResults` for the test to read.
 */

export interface PondPageOptions {
  /** The upload route, on the upload service's origin. */
  url: string;
  headers: Record<string, string>;
}

/** One `processfile` event: FilePond's error (status and the server's text) or the server's text. */
export interface PondResult {
  error: { code: number; body: string } | null;
  /** What `onload` returned: the server's answer, as FilePond keeps it for the file. */
  serverId: string | null;
  filename: string;
}

export function pondPage(options: PondPageOptions): string {
  // JSON inside a script element: `<` escaped so no value can close the element.
  const json = JSON.stringify(options).replace(/</g, '\\u003c');
  return `<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>Upload a file</title>
  <link rel="stylesheet" href="/filepond.min.css">
</head>
<body>
  <input type="file" id="upload">
  <script id="pond-options" type="application/json">${json}</script>
  <script src="/filepond.min.js"></script>
  <script>
    const options = JSON.parse(document.getElementById('pond-options').textContent);
    window.pondResults = [];
    const pond = FilePond.create(document.getElementById('upload'), {
      name: 'filepond',
      server: {
        process: {
          url: options.url,
          headers: options.headers,
          // FilePond passes the response text through these; keep it whole, to check it.
          onload: (text) => text,
          onerror: (text) => text,
        },
      },
    });
    pond.on('processfile', (error, file) => {
      window.pondResults.push({
        error: error ? { code: error.code, body: String(error.body) } : null,
        serverId: file.serverId,
        filename: file.filename,
      });
    });
  </script>
</body>
</html>
`;
}
