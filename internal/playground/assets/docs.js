// Starts Swagger UI on #swagger-ui with the OpenAPI document named by its
// data-spec attribute. Kept out of the HTML page so that the
// Content-Security-Policy needs no 'unsafe-inline' for scripts.
(function () {
  'use strict';

  var root = document.getElementById('swagger-ui');

  // #token=XYZ authorizes "Try it out" requests with "Authorization: Bearer
  // XYZ", as the GraphQL playground does. The fragment never reaches the
  // server; drop it from the address bar and history too. Deep links
  // (#/tag/operation) are left alone.
  var token = null;
  if (location.hash.indexOf('#token=') === 0) {
    token = new URLSearchParams(location.hash.slice(1)).get('token');
    history.replaceState(null, '', location.pathname + location.search);
  }

  window.ui = SwaggerUIBundle({
    url: root.dataset.spec,
    domNode: root,
    deepLinking: true,
    // The public validator would receive the document: never call it.
    validatorUrl: null,
    // The token is typed in "Authorize" and lasts for this page only.
    persistAuthorization: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    onComplete: function () {
      if (token) {
        window.ui.preauthorizeApiKey('bearerAuth', token);
      }
    },
  });
})();
