// The reference page's own script: a file rather than inline, so the page's CSP can stay 'self'.
window.addEventListener('DOMContentLoaded', () => {
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
