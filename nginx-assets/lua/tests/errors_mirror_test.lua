-- Unit tests, with a mocked ngx, of ingress-nginx's custom error pages and request mirroring on the Lua side: the
-- router puts a route's default backend, error-page data and mirror target into variables (and only for routes
-- that have them); the balancer falls back to the default backend when the route's backend has no endpoint; the
-- mirror balancer reads its own variable and writes none, several copies each take their slot's target and are
-- drawn per request and slot (mirror_pick); errors.lua sends an error to @portico_errors or answers
-- nginx's own page; validate.lua refuses route fields that would carry anything unsafe into headers or the URI.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local UNAVAILABLE = mock.UNAVAILABLE
local ep = mock.ep

local function setup(profiles)
  local T = mock.fresh()
  local store = require("portico.store")
  local router = require("portico.router")
  local balancer = require("portico.balancer")
  router.configure({ profiles = profiles or {} })
  balancer.configure({ unavailable = UNAVAILABLE })
  return T, store, router, balancer
end

-- One request through the router: the variables are cleared first (a new request), as nginx's are.
local function req(T, router, host, uri, o)
  o = o or {}
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.host, v.uri, v.scheme, v.request_method = host, uri, "http", "GET"
  v.request_uri, v.args = o.request_uri or uri, o.args
  return router.route(), v
end

local EP = { namespace = "shop", ingress = "web", service = "cart", port = "http" }

do -- the router: route data into variables, only for routes that have it
  local T, store, router = setup({ "p_err", "p_mir" })
  store.apply_all({ r = { upsert = {
    ["a.example"] = { tls = false, rules = {
      { path = "/err", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_err", defaultBackendId = "shop_errors_8080", errorPage = EP } },
      { path = "/plain-err", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_err", errorPage = EP } },
      { path = "/global-err", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_err",
        errorPage = { namespace = "shop", ingress = "web", service = "cart", port = "http", backendId = "ingress-nginx_default-http-backend_80" } } },
      { path = "/both-err", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_err", defaultBackendId = "shop_errors_8080",
        errorPage = { namespace = "shop", ingress = "web", service = "cart", port = "http", backendId = "ingress-nginx_default-http-backend_80" } } },
      { path = "/mirror", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_mir",
        mirrors = { { backendId = "shop_shadow_80", scheme = "http", host = "shadow.test", serverName = "shadow.shop.svc", requestUri = true } } } },
      { path = "/mirror-path", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false, profile = "p_mir",
        mirrors = { { backendId = "extauth.shadow.example.443", scheme = "https", host = "shadow.example", serverName = "shadow.example", path = "/copy" } } } },
      { path = "/", match = "prefix", route = { source = "Ingress/shop/other", backendId = "shop_cart_80", sslRedirect = false } },
    } },
  } } })
  local jump, v = req(T, router, "a.example", "/err/x")
  R.check("a route with default-backend and custom-http-errors jumps to its profile", jump == "@portico_p_err", jump)
  R.check("…$portico_fallback is its default backend", v.portico_fallback == "shop_errors_8080", v.portico_fallback)
  R.check("…$portico_error_route carries the backend and the X-* values", v.portico_error_route == "shop_errors_8080\tshop\tweb\tcart\thttp", v.portico_error_route)
  R.check("…and nothing of mirroring", v.portico_mirror_backend == nil)
  jump, v = req(T, router, "a.example", "/plain-err/x")
  R.check("custom-http-errors without default-backend: an empty backend in $portico_error_route, no fallback",
    v.portico_error_route == "\tshop\tweb\tcart\thttp" and v.portico_fallback == nil, tostring(v.portico_error_route))
  jump, v = req(T, router, "a.example", "/global-err/x")
  R.check("custom-http-errors with --default-backend-service: its backend in $portico_error_route, still no fallback",
    v.portico_error_route == "ingress-nginx_default-http-backend_80\tshop\tweb\tcart\thttp" and v.portico_fallback == nil, tostring(v.portico_error_route))
  jump, v = req(T, router, "a.example", "/both-err/x")
  R.check("…the route's own default backend wins over it", v.portico_error_route == "shop_errors_8080\tshop\tweb\tcart\thttp", tostring(v.portico_error_route))
  jump, v = req(T, router, "a.example", "/mirror/a%20b", { request_uri = "/mirror/a%20b?q=1", args = "q=1" })
  R.check("mirror with $request_uri: the client's URI as sent, the target and its Host",
    v.portico_mirror_uri == "/mirror/a%20b?q=1" and v.portico_mirror_backend == "shop_shadow_80" and v.portico_mirror_scheme == "http"
      and v.portico_mirror_host == "shadow.test" and v.portico_mirror_sni == "shadow.shop.svc", tostring(v.portico_mirror_uri))
  jump, v = req(T, router, "a.example", "/mirror-path/z", { request_uri = "/mirror-path/z?a=1&b=2", args = "a=1&b=2" })
  R.check("mirror with a literal path: that path and the client's query", v.portico_mirror_uri == "/copy?a=1&b=2" and v.portico_mirror_scheme == "https", tostring(v.portico_mirror_uri))
  jump, v = req(T, router, "a.example", "/mirror-path/z")
  R.check("…without a query: the path alone", v.portico_mirror_uri == "/copy", tostring(v.portico_mirror_uri))
  jump, v = req(T, router, "a.example", "/other")
  R.check("a route without them sets none of the variables",
    jump == "" and v.portico_fallback == nil and v.portico_error_route == nil and v.portico_mirror_backend == nil and v.portico_backend == "shop_cart_80", jump)
  R.check("the router names the backend's upstream (the access log's $proxy_upstream_name)", v.portico_upstream_name == "shop-cart-80", tostring(v.portico_upstream_name))
  local name = require("portico.store").upstream_name
  R.check("…an id of another shape is its own name, as the map's regex", name("a_b") == "a_b" and name("a_b_c_d") == "a_b_c_d" and name("x__y_1") == "x__y_1" and name("n_s_1") == "n-s-1")
end

do -- the router: several copies and shares, by slot in $portico_mirror_backend
  local T, store, router = setup({ "p_slots" })
  local function gm(id, share) return { backendId = id, scheme = "http", host = "", serverName = id .. ".svc", requestUri = true, share = share } end
  store.apply_all({ r = { upsert = {
    ["g.example"] = { tls = false, rules = {
      { path = "/two", match = "prefix", route = { source = "HTTPRoute/shop/r", backendId = "shop_cart_80", sslRedirect = false, profile = "p_slots",
        mirrors = { gm("shop_v2_8080"), gm("shop_v3_8080") } } },
      { path = "/share", match = "prefix", route = { source = "HTTPRoute/shop/r", backendId = "shop_cart_80", sslRedirect = false, profile = "p_slots",
        mirrors = { gm("shop_v2_8080", { numerator = 1, denominator = 5 }), gm("shop_v3_8080"), gm("shop_v4_8080", { numerator = 25, denominator = 50 }) } } },
    } },
  } } })
  local jump, v = req(T, router, "g.example", "/two/x", { request_uri = "/two/x?a=1", args = "a=1" })
  R.check("two whole copies: both targets by slot, the request's Host and URI", jump == "@portico_p_slots" and v.portico_mirror_backend == "shop_v2_8080\tshop_v3_8080"
    and v.portico_mirror_host == "g.example" and v.portico_mirror_uri == "/two/x?a=1" and v.portico_backend == "shop_cart_80", tostring(v.portico_mirror_backend))
  jump, v = req(T, router, "g.example", "/share/x")
  R.check("shares: each slot with its probability (1/5, whole, 25/50)", v.portico_mirror_backend == "shop_v2_8080 0.2\tshop_v3_8080\tshop_v4_8080 0.5", tostring(v.portico_mirror_backend))
end

do -- mirror_pick and the mirror balancer in slots: the slot's own target, drawn per request and slot
  local T, store, _, balancer = setup()
  store.apply({ shop_v2_8080 = { endpoints = { ep("10.0.2.1", 8080) } }, shop_v3_8080 = { endpoints = { ep("10.0.3.1", 8080) } } })
  store.sync()
  local slot = balancer._mirror_slot
  local a, b = slot("x_1 0.25\ty_2\tz_3 0.5", "/_portico_internal/mirror/0")
  R.check("slot 0: its id and share", a == "x_1" and b == 0.25, tostring(a) .. " " .. tostring(b))
  a, b = slot("x_1 0.25\ty_2\tz_3 0.5", "/_portico_internal/mirror_nobody/1")
  R.check("slot 1: a whole copy has no share", a == "y_2" and b == nil, tostring(a))
  a, b = slot("x_1 0.25\ty_2\tz_3 0.5", "/_portico_internal/mirror/2")
  R.check("slot 2: the last entry", a == "z_3" and b == 0.5, tostring(a))
  R.check("a slot the list does not have: none", slot("x_1\ty_2", "/_portico_internal/mirror/2") == nil and slot("x_1\ty_2", "/_portico_internal/mirror") == nil)
  local v = T.ngx.var
  local function pick(list, uri)
    v.portico_mirror_backend, v.uri, T.exited = list, uri, nil
    balancer.mirror_pick()
    return T.exited
  end
  R.check("mirror_pick: a whole copy goes on", pick("shop_v2_8080\tshop_v3_8080", "/_portico_internal/mirror/1") == nil)
  R.check("mirror_pick: a slot the list does not have answers 204 itself", pick("shop_v2_8080", "/_portico_internal/mirror/3") == 204)
  -- Statistics: 20000 draws per share; the bounds are far (> 10 standard deviations) from a wrong probability.
  local function rate(list, uri)
    local n = 0
    for _ = 1, 20000 do if pick(list, uri) == nil then n = n + 1 end end
    return n / 20000
  end
  local r20 = rate("shop_v2_8080 0.2\tshop_v3_8080 0.7", "/_portico_internal/mirror/0")
  local r70 = rate("shop_v2_8080 0.2\tshop_v3_8080 0.7", "/_portico_internal/mirror/1")
  R.check("mirror_pick: a share of 0.2 copies about 20 % of the requests", r20 > 0.18 and r20 < 0.22, tostring(r20))
  R.check("mirror_pick: the next slot's share of 0.7 its own 70 %", r70 > 0.68 and r70 < 0.72, tostring(r70))
  -- Independence: the two slots drawn for the same requests, each with its own draw.
  local both, first, second = 0, 0, 0
  for _ = 1, 20000 do
    local x = pick("shop_v2_8080 0.5\tshop_v3_8080 0.5", "/_portico_internal/mirror/0") == nil
    local y = pick("shop_v2_8080 0.5\tshop_v3_8080 0.5", "/_portico_internal/mirror/1") == nil
    if x then first = first + 1 end
    if y then second = second + 1 end
    if x and y then both = both + 1 end
  end
  R.check("mirror_pick: two slots of 0.5 are drawn independently (both about 25 %)", both / 20000 > 0.23 and both / 20000 < 0.27 and first > 9400 and second > 9400, tostring(both))
  T.exited = nil
  v.portico_backend, v.portico_mirror_backend, v.uri = "shop_cart_80", "shop_v2_8080 0.3\tshop_v3_8080", "/_portico_internal/mirror/1"
  balancer.balance_mirror()
  R.check("the mirror balancer in slot 1: slot 1's backend", T.peers[#T.peers] == "10.0.3.1:8080", T.peers[#T.peers])
  v.uri = "/_portico_internal/mirror_nobody/0"
  balancer.balance_mirror()
  R.check("…in slot 0: slot 0's backend (its share left out)", T.peers[#T.peers] == "10.0.2.1:8080", T.peers[#T.peers])
  R.check("…writing no variable", v.portico_backend == "shop_cart_80" and v.portico_mirror_backend == "shop_v2_8080 0.3\tshop_v3_8080")
  v.uri = "/_portico_internal/mirror"
  balancer.balance_mirror()
  R.check("a list of slots in the one-copy location: the 503 socket (nothing copied)", T.peers[#T.peers] == UNAVAILABLE, T.peers[#T.peers])
end

do -- --default-backend-service: what no path matches is proxied to it, on a known host and on an unknown one
  local T, store, router = setup({})
  store.apply_all({ r = { upsert = {
    ["k.example"] = { tls = false, unmatchedBackendId = "ingress-nginx_default-http-backend_80", rules = {
      { path = "/app", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false } },
    } },
    ["_"] = { tls = false, unmatchedBackendId = "ingress-nginx_default-http-backend_80", rules = {} },
    ["plain.example"] = { tls = false, rules = {
      { path = "/app", match = "prefix", route = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false } },
    } },
  } } })
  local jump, v = req(T, router, "k.example", "/app/x")
  R.check("unmatched backend: a matching path still goes to its own backend", jump == "" and v.portico_backend == "shop_cart_80", tostring(v.portico_backend))
  jump, v = req(T, router, "k.example", "/other")
  R.check("unmatched backend: a path no rule matches is proxied to the default backend", jump == "" and v.portico_backend == "ingress-nginx_default-http-backend_80", tostring(jump))
  R.check("…named as ingress-nginx names its upstream", v.portico_upstream_name == "ingress-nginx-default-http-backend-80", tostring(v.portico_upstream_name))
  jump, v = req(T, router, "unknown.example", "/x")
  R.check("unmatched backend: an unknown host reaches the catch-all host and the default backend", jump == "" and v.portico_backend == "ingress-nginx_default-http-backend_80", tostring(jump))
  jump, v = req(T, router, "plain.example", "/other")
  R.check("a host without it still answers 404 itself", jump == "@portico_unmatched" and v.portico_backend == nil, tostring(jump))
end

do -- the balancer: the default backend while the route's backend has no endpoint
  local T, store, _, balancer = setup()
  store.apply({ shop_cart_80 = { endpoints = {} }, shop_errors_8080 = { endpoints = { ep("10.0.9.1", 8080) } }, shop_ok_80 = { endpoints = { ep("10.0.1.1") } } })
  local function balance(id, fallback)
    local v = T.ngx.var
    v.portico_backend, v.portico_fallback, T.last_failure = id, fallback, nil
    v.portico_upstream_name = id:gsub("_", "-") -- as the router names it
    store.sync()
    balancer.balance()
    return T.peers[#T.peers], v.portico_backend
  end
  local peer, backend = balance("shop_cart_80", "shop_errors_8080")
  R.check("no endpoint + default-backend: the default backend's endpoint", peer == "10.0.9.1:8080", peer)
  R.check("…and $portico_backend names it (log, retries)", backend == "shop_errors_8080", backend)
  R.check("…the router's upstream name is cleared: the access log derives the fallback's", T.ngx.var.portico_upstream_name == "", tostring(T.ngx.var.portico_upstream_name))
  balance("shop_ok_80", "shop_errors_8080")
  R.check("a backend with endpoints keeps the router's upstream name", T.ngx.var.portico_upstream_name == "shop-ok-80", tostring(T.ngx.var.portico_upstream_name))
  peer = balance("shop_cart_80", nil)
  R.check("no endpoint, no default-backend: the 503 socket", peer == UNAVAILABLE, peer)
  peer = balance("shop_ok_80", "shop_errors_8080")
  R.check("a backend with endpoints is used, whatever its fallback", peer == "10.0.1.1:80", peer)
  peer = balance("shop_missing_80", "shop_errors_8080")
  R.check("a backend not in the data falls back too (a Service that does not exist)", peer == "10.0.9.1:8080", peer)
  store.apply({ shop_errors_8080 = { endpoints = {} } })
  peer = balance("shop_cart_80", "shop_errors_8080")
  R.check("a default backend without endpoints: the 503 socket", peer == UNAVAILABLE, peer)
  store.apply({ shop_cart_80 = { endpoints = { ep("10.0.2.2") } } })
  peer = balance("shop_cart_80", "shop_errors_8080")
  R.check("endpoints back (data only): the route's own backend again", peer == "10.0.2.2:80", peer)
end

do -- the mirror balancer reads $portico_mirror_backend and writes nothing the request uses
  local T, store, _, balancer = setup()
  store.apply({
    shop_shadow_80 = { balance = "cookie", cookie = { name = "S", mode = "balanced" }, endpoints = { ep("10.0.7.1"), ep("10.0.7.2") },
      canary = { backendId = "shop_canary_80", weight = 100, weightTotal = 100 } },
    shop_canary_80 = { endpoints = { ep("10.0.8.1") } },
  })
  store.sync()
  local v = T.ngx.var
  v.portico_backend, v.portico_mirror_backend, v.portico_set_cookie = "shop_cart_80", "shop_shadow_80", "keep"
  balancer.balance_mirror()
  local first = T.peers[#T.peers]
  R.check("the mirror target's endpoint, never its canary", first == "10.0.7.1:80" or first == "10.0.7.2:80", first)
  R.check("…$portico_backend and $portico_set_cookie untouched, no cookie header",
    v.portico_backend == "shop_cart_80" and v.portico_set_cookie == "keep" and T.ngx.header["Set-Cookie"] == nil)
  v.upstream_addr, T.last_failure = first .. " : ", "failed"
  balancer.balance_mirror()
  local second = T.peers[#T.peers]
  R.check("a retry of the copy goes to another endpoint", second ~= first and second ~= nil, tostring(second))
  T.last_failure = nil
  v.portico_mirror_backend = ""
  balancer.balance_mirror()
  R.check("no mirror backend: the 503 socket (the copy fails, alone)", T.peers[#T.peers] == UNAVAILABLE)
end

do -- errors.lua: on to @portico_errors with the X-* values, or nginx's own page
  local T = setup()
  local errors = require("portico.errors")
  function T.ngx.exec(where) T.execd = where end
  local v = T.ngx.var
  v.portico_backend, v.portico_timeouts, v.portico_upstream_name = "shop_cart_80", "1 2 3", "shop-cart-80"
  v.portico_error_code, v.portico_error_route = "503", "shop_errors_8080\tshop\tweb\tcart\t80"
  errors.page()
  R.check("with a default backend: on to @portico_errors", T.execd == "@portico_errors" and T.exited == nil, tostring(T.execd))
  R.check("…proxied to the default backend with the global timeouts", v.portico_backend == "shop_errors_8080" and v.portico_timeouts == "")
  R.check("…the route's upstream name cleared (the access log derives the default backend's)", v.portico_upstream_name == "", tostring(v.portico_upstream_name))
  R.check("…X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port values",
    v.portico_error_namespace == "shop" and v.portico_error_ingress == "web" and v.portico_error_service == "cart" and v.portico_error_port == "80")
  T.execd = nil
  v.portico_backend, v.portico_error_code, v.portico_error_route = "shop_cart_80", "404", "\tshop\tweb\tcart\t80"
  errors.page()
  R.check("without a default backend: nginx's own page for the code", T.exited == 404 and T.execd == nil and v.portico_backend == "shop_cart_80", tostring(T.exited))
  T.exited = nil
  v.portico_error_code, v.portico_error_route = "502", nil
  errors.page()
  R.check("a route whose data has no error page (yet): nginx's own page", T.exited == 502, tostring(T.exited))
end

do -- validate.lua: the route fields
  setup()
  local validate = require("portico.validate")
  local function hr(route)
    local r = { source = "Ingress/shop/web", backendId = "shop_cart_80", sslRedirect = false }
    for k, x in pairs(route) do r[k] = x end
    return validate.host_routes("a.example", { rules = { { path = "/", match = "prefix", route = r } } })
  end
  local mirror = function(o)
    local m = { backendId = "shop_shadow_80", scheme = "https", host = "shadow.example", serverName = "shadow.example", requestUri = true }
    for k, x in pairs(o) do if x == false then m[k] = nil else m[k] = x end end
    return { mirrors = { m } }
  end
  local good = { defaultBackendId = "shop_errors_8080", errorPage = EP, mirrors = mirror({}).mirrors }
  R.check("validate: default backend, error page and mirror", hr(good) == nil, hr(good))
  R.check("validate: an error page with --default-backend-service's backend", hr({ errorPage = { namespace = "shop", ingress = "web", service = "cart", port = "80", backendId = "ingress-nginx_default-http-backend_80" } }) == nil)
  R.check("validate: a mirror with a literal path", hr(mirror({ requestUri = false, path = "/copy/a%20b" })) == nil)
  R.check("validate: an IPv6 Host header in brackets", hr(mirror({ host = "[2001:db8::1]", serverName = "2001:db8::1" })) == nil)
  local bad = {
    { "defaultBackendId with a slash", { defaultBackendId = "shop/errors" } },
    { "errorPage with a header break", { errorPage = { namespace = "shop", ingress = "web\r\nX-Evil: 1", service = "cart", port = "80" } } },
    { "errorPage port with a space", { errorPage = { namespace = "shop", ingress = "web", service = "cart", port = "80 x" } } },
    { "errorPage backendId with a slash", { errorPage = { namespace = "shop", ingress = "web", service = "cart", port = "80", backendId = "ns/errors" } } },
    { "mirror scheme gopher", mirror({ scheme = "gopher" }) },
    { "mirror host with a semicolon", mirror({ host = "a.example;b" }) },
    { "mirror host with CR/LF", mirror({ host = "a.example\r\nX-Evil: 1" }) },
    { "mirror host with a space", mirror({ host = "a example" }) },
    { "mirror serverName with a quote", mirror({ serverName = "a\"b" }) },
    { "mirror path with a space", mirror({ requestUri = false, path = "/a b" }) },
    { "mirror path with a variable", mirror({ requestUri = false, path = "/$host" }) },
    { "mirror path with a query", mirror({ requestUri = false, path = "/a?b=1" }) },
    { "mirror path not absolute", mirror({ requestUri = false, path = "a" }) },
    { "mirror with both requestUri and path", mirror({ path = "/a" }) },
    { "mirror with neither", mirror({ requestUri = false }) },
    { "mirror with a bad backend id", mirror({ backendId = "A B" }) },
  }
  local function gm(o)
    local m = { backendId = "shop_v2_8080", scheme = "http", host = "", serverName = "v2.shop.svc", requestUri = true }
    for k, x in pairs(o or {}) do if x == false then m[k] = nil else m[k] = x end end
    return m
  end
  R.check("validate: several copies with shares", hr({ mirrors = { gm({ share = { numerator = 1, denominator = 5 } }), gm({ backendId = "shop_v3_8080" }) } }) == nil)
  local sixteen = {}
  for i = 1, 16 do sixteen[i] = gm() end
  R.check("validate: 16 copies", hr({ mirrors = sixteen }) == nil)
  sixteen[17] = gm()
  bad[#bad + 1] = { "17 copies", { mirrors = sixteen } }
  bad[#bad + 1] = { "no copy", { mirrors = {} } }
  bad[#bad + 1] = { "mirrors not an array", { mirrors = gm() } }
  bad[#bad + 1] = { "a share of 0", { mirrors = { gm({ share = { numerator = 0, denominator = 5 } }) } } }
  bad[#bad + 1] = { "a share of all", { mirrors = { gm({ share = { numerator = 5, denominator = 5 } }) } } }
  bad[#bad + 1] = { "a share above all", { mirrors = { gm({ share = { numerator = 6, denominator = 5 } }) } } }
  bad[#bad + 1] = { "a share not an integer fraction", { mirrors = { gm({ share = { numerator = 0.5, denominator = 5 } }) } } }
  bad[#bad + 1] = { "a share as a string", { mirrors = { gm({ share = "0.5" }) } } }
  bad[#bad + 1] = { "several copies over https", { mirrors = { gm({ scheme = "https" }), gm() } } }
  bad[#bad + 1] = { "several copies with other hosts", { mirrors = { gm(), gm({ host = "other.example" }) } } }
  bad[#bad + 1] = { "several copies with other URIs", { mirrors = { gm(), gm({ requestUri = false, path = "/x" }) } } }
  bad[#bad + 1] = { "a second copy with a tab in its backend id", { mirrors = { gm(), gm({ backendId = "a\tb" }) } } }
  for _, c in ipairs(bad) do
    local e = hr(c[2])
    R.check("validate: " .. c[1] .. " is refused", e ~= nil, "accepted")
  end
  R.check("validate: a host's unmatchedBackendId", validate.host_routes("_", { rules = {}, unmatchedBackendId = "ingress-nginx_default-http-backend_80" }) == nil)
  R.check("validate: a host's unmatchedBackendId with a space is refused", validate.host_routes("_", { rules = {}, unmatchedBackendId = "a b" }) ~= nil)
end

do -- errors.lua drops the router's hand-off to the balancer: a route whose location answers an error itself (no
  -- balancer call in between) goes on to the default backend it just wrote, never to the route's backend
  local T = mock.fresh()
  local current = nil
  package.loaded["resty.core.base"] = { get_request = function() return current end }
  local balancer = require("portico.balancer")
  package.loaded["resty.core.base"] = nil
  balancer.configure({ unavailable = UNAVAILABLE })
  local store = require("portico.store")
  store.apply({ shop_cart_80 = { endpoints = { ep("10.0.1.1") } }, shop_errors_8080 = { endpoints = { ep("10.0.9.1", 8080) } } })
  store.sync()
  function T.ngx.exec(where) T.execd = where end
  local v = T.ngx.var
  local A = { "request A" }
  v.portico_backend, v.portico_timeouts = "shop_cart_80", "1 2 3"
  balancer.handoff(A, "shop_cart_80", "1 2 3") -- as the router hands off
  v.portico_error_code, v.portico_error_route = "502", "shop_errors_8080\tshop\tweb\tcart\t80"
  require("portico.errors").page()
  current = A
  T.timeouts = nil
  balancer.balance()
  R.check("errors.lua: the default backend is balanced, with the global timeouts (the hand-off was dropped)",
    T.peers[#T.peers] == "10.0.9.1:8080" and T.timeouts == nil, tostring(T.peers[#T.peers]))
end

R.done()
