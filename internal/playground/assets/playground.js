// Starts GraphiQL on #graphiql. Kept out of the HTML page so that the
// Content-Security-Policy needs no 'unsafe-inline' for scripts.
(function () {
  'use strict';

  // GraphiQL 3 stores headers only when they are typed and forgets them
  // again on the next load, so the page keeps the last headers itself.
  var KEY = 'playground:headers';

  function load() {
    try {
      return localStorage.getItem(KEY) || '';
    } catch (e) {
      return '';
    }
  }

  function save(value) {
    try {
      if (value) {
        localStorage.setItem(KEY, value);
      } else {
        localStorage.removeItem(KEY);
      }
    } catch (e) {
      // Storage disabled or full: headers last for this page only.
    }
  }

  function parseObject(text) {
    try {
      var value = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        return value;
      }
    } catch (e) {
      // Not JSON: start afresh.
    }
    return {};
  }

  var root = document.getElementById('graphiql');
  var headers = load();

  // #token=XYZ adds "Authorization: Bearer XYZ" to the headers. The fragment
  // never reaches the server; drop it from the address bar and history too.
  var token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (token) {
    var merged = parseObject(headers);
    merged.Authorization = 'Bearer ' + token;
    headers = JSON.stringify(merged, null, 2);
    save(headers);
    history.replaceState(null, '', location.pathname + location.search);
  } else if (root.dataset.demoToken) {
    // The server minted a demo token (a local run on the demo data): use
    // it unless the headers already carry another Authorization. One that
    // is an earlier demo token (say of a database since recreated) is
    // replaced, so the demo keeps working.
    var DEMO = 'playground:demo-token';
    var current = parseObject(headers);
    var previous = null;
    try {
      previous = localStorage.getItem(DEMO);
      localStorage.setItem(DEMO, root.dataset.demoToken);
    } catch (e) {
      // Storage disabled: nothing to compare with.
    }
    if (!current.Authorization || (previous && current.Authorization === 'Bearer ' + previous)) {
      current.Authorization = 'Bearer ' + root.dataset.demoToken;
      headers = JSON.stringify(current, null, 2);
      save(headers);
    }
  }

  // Subscriptions go over graphql-transport-ws on the same endpoint. A
  // socket cannot carry headers from a browser, so the Authorization of
  // the headers editor (as last saved) goes in connection_init.
  var endpoint = new URL(root.dataset.endpoint, location.href);
  var wsURL = (endpoint.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + endpoint.host + endpoint.pathname;
  var props = {
    fetcher: GraphiQL.createFetcher({
      url: root.dataset.endpoint,
      subscriptionUrl: wsURL,
      wsConnectionParams: function () {
        var auth = parseObject(load()).Authorization;
        return auth ? { Authorization: auth } : {};
      },
    }),
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers',
    // Persistence is done above and in onEditHeaders instead.
    shouldPersistHeaders: false,
    showPersistHeadersSettings: false,
    onEditHeaders: save,
    // The tab GraphiQL opens on (when it has none saved) and every new
    // tab: a query that shows the domain.
    defaultQuery: root.dataset.defaultQuery,
    // The explorer builds a query by ticking fields of the schema; the
    // plugin is created once, as GraphiQL expects.
    plugins: [GraphiQLPluginExplorer.explorerPlugin()],
  };
  if (headers) {
    props.headers = headers;
    props.defaultHeaders = headers;
  }

  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, props));
})();
