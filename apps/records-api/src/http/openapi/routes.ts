import express, { Router } from 'express';
import { openApiDocument } from './document';

/**
 * Swagger UI's files, from the npm package: the page loads nothing from another host. The package
 * has no types; its absolute-path module names the directory of its files, wherever it is
 * installed (beside the service's bundle in an image, too).
 */
const SWAGGER_UI_DIR: string = require('swagger-ui-dist/absolute-path.js')();
const SWAGGER_UI_ASSETS = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js', '/favicon-32x32.png']);

/** The page's own script: served as a file rather than inline, so the CSP can stay 'self'. */
const INIT_SCRIPT = `window.addEventListener('DOMContentLoaded', () => {
  window.ui = window.SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 1,
    displayRequestDuration: true,
    // Swagger UI would otherwise send the document to a public validator; nothing leaves this host.
    validatorUrl: null,
  });
});
`;

/**
 * Only this origin's scripts, styles and fonts. Swagger UI draws its icons as inline SVG images
 * (`data:` URLs in its stylesheet) and sets element styles from script, hence those two allowances.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>recordbase API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/**
 * The API reference, public: `GET /api/v1/openapi.json` (the document) and `GET /docs` (the page
 * and its assets). Mounted before the API's key check.
 */
export function referenceRoutes(): Router {
  const router = Router();
  // Generated once; every answer sends the same bytes.
  let documentJson: string | undefined;
  router.get('/api/v1/openapi.json', (_req, res) => {
    documentJson ??= JSON.stringify(openApiDocument());
    res.type('application/json').setHeader('Cache-Control', 'no-cache').send(documentJson);
  });
  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.type('html').send(PAGE);
  });
  router.use(
    '/docs/assets',
    (req, res, next) => {
      res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      if (req.method === 'GET' && req.path === '/init.js') {
        res.type('text/javascript').setHeader('Cache-Control', 'no-cache').send(INIT_SCRIPT);
        return;
      }
      // The page's files only; the rest of the package (its demo page, its sources) is not served.
      if (!SWAGGER_UI_ASSETS.has(req.path)) return next('router');
      next();
    },
    express.static(SWAGGER_UI_DIR, { index: false, maxAge: '1h' }),
  );
  return router;
}
