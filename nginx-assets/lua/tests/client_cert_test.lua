-- Unit tests for the client-cert plugin (ingress-nginx's auth-tls-*) with a mocked ngx: each request sets what nginx
-- knows of the TLS connection ($https, $ssl_server_name, $ssl_client_verify, the DNs, the escaped PEM) and which CA
-- configuration the TLS session was verified against (tlsctx, stubbed by mock_ngx), runs the route's plugins in the
-- access phase and asserts the answer and the headers the backend gets. Also: the run in the router (synchronous)
-- and the validation of the instance.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local CA = string.rep("a", 30)
local OTHER_CA = string.rep("b", 30)
local SDN = "CN=client1,O=Acme"
local PEM_ESCAPED = "-----BEGIN%20CERTIFICATE-----%0AMIIB%0A-----END%20CERTIFICATE-----%0A"

local function setup(plugins)
  local T = mock.fresh()
  local store = require("portico.store")
  assert(store.apply_all({ p = { upsert = plugins } }))
  return T, require("portico.plugins")
end

local function mtls(fields)
  local p = { name = "ns/ing (annotations)", type = "client-cert", verify = "on", caId = CA, passCertificate = false }
  for k, v in pairs(fields or {}) do p[k] = v end
  if p.verify == "off" and not (fields or {}).caId then p.caId = nil end
  return p
end

-- o: plugins, verify ($ssl_client_verify; nil = plain HTTP), sni, host, bound (the session's CA id), headers
local function request(T, engine, o)
  T.headers = {}
  for k, v in pairs(o.headers or {}) do T.headers[k:lower()] = v end
  T.ngx.ctx = {}
  T.ngx.status = 0
  T.exited = nil
  T.printed = {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.portico_plugins = o.plugins or "mtls"
  v.remote_addr = o.ip or "192.0.2.10"
  v.uri = "/"
  v.host = o.host or "a.example"
  local tls = o.verify ~= nil
  v.scheme = tls and "https" or "http"
  v.https = tls and "on" or ""
  if tls then
    v.ssl_server_name = o.sni == nil and (o.host or "a.example") or (o.sni or nil)
    if o.sni == false then v.ssl_server_name = nil end
    v.ssl_client_verify = o.verify
    if o.verify ~= "NONE" then
      v.ssl_client_s_dn = o.sdn or SDN
      v.ssl_client_i_dn = "CN=test-ca"
      v.ssl_client_escaped_cert = PEM_ESCAPED
    end
  end
  T.tls_bound = o.bound == nil and (tls and o.verify ~= "NONE" and CA or nil) or (o.bound or nil)
  engine.access()
  local proxied = T.exited == nil
  local status = proxied and 200 or T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  local out = {}
  for k, x in pairs(T.resp_headers) do out[k] = x end
  return { status = status, proxied = proxied, headers = out, req = T.headers, body = table.concat(T.printed) }
end

-- ---- the verification result per mode (nginx's ssl_verify_client) ---------------------------------------------------
do
  local modes = { "on", "optional", "optional_no_ca" }
  local plugins = {}
  for _, m in ipairs(modes) do plugins[m] = mtls({ verify = m }) end
  local T, engine = setup(plugins)
  local expect = {
    -- result                                           on   optional optional_no_ca
    { "SUCCESS",                                          200, 200, 200 },
    { "NONE",                                             400, 200, 200 },
    { "FAILED:unable to get local issuer certificate",   400, 400, 200 },
    { "FAILED:self-signed certificate",                   400, 400, 200 },
    { "FAILED:self signed certificate in certificate chain", 400, 400, 200 },
    { "FAILED:certificate has expired",                   400, 400, 400 },
    { "FAILED:certificate chain too long",                400, 400, 400 },
  }
  for _, row in ipairs(expect) do
    for i, m in ipairs(modes) do
      local r = request(T, engine, { plugins = m, verify = row[1] })
      R.check("verify " .. m .. " × " .. row[1] .. " → " .. row[i + 1], r.status == row[i + 1], r.status .. " " .. r.body)
    end
  end
  local r = request(T, engine, { plugins = "on", verify = "NONE" })
  R.check("on without a certificate: nginx's words", r.body:find("No required SSL certificate was sent", 1, true) ~= nil, r.body)
  r = request(T, engine, { plugins = "on", verify = "FAILED:certificate has expired" })
  R.check("on with a certificate that fails: nginx's words", r.body:find("The SSL certificate error", 1, true) ~= nil, r.body)
  r = request(T, engine, { plugins = "on" })
  R.check("plain HTTP has no certificate: on answers 400 (fails closed)", r.status == 400, r.status)
  r = request(T, engine, { plugins = "optional", headers = { ["ssl-client-verify"] = "SUCCESS", ["ssl-client-subject-dn"] = "CN=admin" } })
  R.check("plain HTTP with optional: served, without any ssl-client-* header (the client's are removed)",
    r.proxied and r.req["ssl-client-verify"] == nil and r.req["ssl-client-subject-dn"] == nil, tostring(r.req["ssl-client-verify"]))
end

-- ---- the certificate must have been verified for this host and against this path's CA --------------------------
do
  local T, engine = setup({ mtls = mtls(), opt = mtls({ verify = "optional" }) })
  local r = request(T, engine, { verify = "SUCCESS", sni = "b.example", host = "a.example" })
  R.check("SNI b.example, Host a.example → 421 Misdirected Request", r.status == 421 and not r.proxied, r.status)
  r = request(T, engine, { plugins = "opt", verify = "NONE", sni = "b.example", host = "a.example" })
  R.check("…also without a certificate, and with optional", r.status == 421, r.status)
  r = request(T, engine, { verify = "SUCCESS", sni = false, host = "a.example" })
  R.check("…and without any SNI", r.status == 421, r.status)
  r = request(T, engine, { verify = "SUCCESS", sni = "A.Example.", host = "a.example" })
  R.check("SNI compared case-insensitively, a final dot ignored", r.status == 200 and r.proxied, r.status)
  r = request(T, engine, { verify = "SUCCESS", bound = OTHER_CA })
  R.check("a certificate verified against another CA configuration (another host's, or before a CA change) → 421", r.status == 421, r.status)
  r = request(T, engine, { verify = "SUCCESS", bound = false })
  R.check("a certificate whose session records no CA configuration → 421", r.status == 421, r.status)
  r = request(T, engine, { plugins = "opt", verify = "NONE", bound = OTHER_CA })
  R.check("no certificate: the session's CA does not matter (optional lets it through)", r.status == 200, r.status)
end

-- ---- auth-tls-error-page, auth-tls-match-cn ---------------------------------------------------------------------------
do
  local T, engine = setup({
    page = mtls({ errorPage = "https://errors.example.com/cert?from=portico" }),
    cn = mtls({ matchCn = "CN=client1" }),
    cnopt = mtls({ verify = "optional", matchCn = "CN=client1" }),
    both = mtls({ matchCn = "CN=client2", errorPage = "https://errors.example.com/cert" }),
  })
  local r = request(T, engine, { plugins = "page", verify = "NONE" })
  R.check("error page: no certificate → 302 to it", r.status == 302 and r.headers["location"] == "https://errors.example.com/cert?from=portico", r.status)
  r = request(T, engine, { plugins = "page", verify = "FAILED:certificate has expired" })
  R.check("error page: a certificate that fails → 302 to it", r.status == 302 and r.headers["location"] == "https://errors.example.com/cert?from=portico", r.status)
  r = request(T, engine, { plugins = "page", verify = "SUCCESS" })
  R.check("error page: a valid certificate is served", r.status == 200 and r.proxied, r.status)
  r = request(T, engine, { plugins = "cn", verify = "SUCCESS", sdn = "CN=client1,O=Acme" })
  R.check("match-cn: a subject DN that matches is served", r.proxied, r.status)
  r = request(T, engine, { plugins = "cn", verify = "SUCCESS", sdn = "CN=intruder,O=Acme" })
  R.check("match-cn: one that does not → 403", r.status == 403 and not r.proxied, r.status)
  r = request(T, engine, { plugins = "cnopt", verify = "NONE" })
  R.check("match-cn with optional and no certificate → 403 (an empty DN does not match)", r.status == 403, r.status)
  r = request(T, engine, { plugins = "both", verify = "SUCCESS", sdn = "CN=client1" })
  R.check("match-cn refusal is a 403, not the error page", r.status == 403 and r.headers["location"] == nil, r.status)
end

-- ---- headers to the backend ---------------------------------------------------------------------------------------------
do
  local T, engine = setup({ plain = mtls(), pass = mtls({ passCertificate = true }), off = mtls({ verify = "off" }) })
  local forged = { ["ssl-client-verify"] = "SUCCESS", ["ssl-client-subject-dn"] = "CN=admin", ["ssl-client-issuer-dn"] = "CN=evil", ["ssl-client-cert"] = "forged" }
  local r = request(T, engine, { plugins = "plain", verify = "SUCCESS", headers = forged })
  R.check("headers: ssl-client-verify, -subject-dn, -issuer-dn from the connection",
    r.req["ssl-client-verify"] == "SUCCESS" and r.req["ssl-client-subject-dn"] == SDN and r.req["ssl-client-issuer-dn"] == "CN=test-ca", tostring(r.req["ssl-client-subject-dn"]))
  R.check("headers: without pass-certificate, a client-sent ssl-client-cert is removed", r.req["ssl-client-cert"] == nil, tostring(r.req["ssl-client-cert"]))
  r = request(T, engine, { plugins = "pass", verify = "SUCCESS", headers = forged })
  R.check("headers: pass-certificate sends the escaped PEM in ssl-client-cert", r.req["ssl-client-cert"] == PEM_ESCAPED, tostring(r.req["ssl-client-cert"]))
  r = request(T, engine, { plugins = "off", verify = "SUCCESS", headers = forged })
  R.check("headers: verify off → ssl-client-verify NONE, the client's DNs removed",
    r.proxied and r.req["ssl-client-verify"] == "NONE" and r.req["ssl-client-subject-dn"] == nil and r.req["ssl-client-cert"] == nil, tostring(r.req["ssl-client-verify"]))
end

-- ---- order and instances ---------------------------------------------------------------------------------------------
do
  local T, engine = setup({
    ip = { name = "ns/ip", type = "ip-restriction", allow = { "10.0.0.0/8" }, status = 403 },
    mtls = mtls(),
    bad = mtls({ matchCn = "CN=(" }),
  })
  -- As PCRE: a pattern that does not compile is an error (nil, nil, err), whatever the subject.
  local find = T.ngx.re.find
  T.ngx.re.find = function(s, p, o)
    if p:find("(", 1, true) and not p:find(")", 1, true) then return nil, nil, "missing closing parenthesis" end
    return find(s, p, o)
  end
  local r = request(T, engine, { plugins = "ip,mtls", verify = "NONE", ip = "192.0.2.1" })
  R.check("order: the client certificate is checked before the IP allowlist (400, not 403)", r.status == 400, r.status)
  r = request(T, engine, { plugins = "bad", verify = "SUCCESS" })
  R.check("a match-cn PCRE refuses fails its paths closed (503)", r.status == 503 and not r.proxied, r.status)
end

do -- the synchronous run in the router: the refusal goes through @portico_deny, the headers are set in place
  local T = mock.fresh()
  local store = require("portico.store")
  assert(store.apply_all({
    p = { upsert = { mtls = mtls({ errorPage = "https://errors.example.com/cert" }) } },
    b = { upsert = { ["ns_web_80"] = { endpoints = { { address = "10.0.0.1", port = 80 } }, balance = "round_robin" } } },
    r = { upsert = { ["a.example"] = { tls = true, rules = { { path = "/", match = "prefix", route = { source = "Ingress/ns/ing", backendId = "ns_web_80", sslRedirect = false, plugins = { "mtls" } } } } } } },
  }))
  local router = require("portico.router")
  local plugins = require("portico.plugins")
  local v = T.ngx.var
  v.host, v.uri, v.scheme, v.https, v.ssl_server_name, v.ssl_client_verify = "a.example", "/", "https", "on", "a.example", "NONE"
  local jump = router.route()
  R.check("router: no certificate → @portico_deny", jump == "@portico_deny", jump)
  plugins.answer()
  R.check("router: …answered 302 to the error page", T.ngx.status == 302 and T.resp_headers["location"] == "https://errors.example.com/cert", T.ngx.status)
  v.ssl_client_verify, v.ssl_client_s_dn, v.ssl_client_i_dn = "SUCCESS", SDN, "CN=test-ca"
  T.tls_bound = CA
  T.headers = { ["ssl-client-verify"] = "forged" }
  jump = router.route()
  R.check("router: a valid certificate is proxied from location /", jump == "", jump)
  R.check("router: …with the connection's ssl-client-verify", T.headers["ssl-client-verify"] == "SUCCESS", tostring(T.headers["ssl-client-verify"]))
end

do -- validation of client-cert instances (the configuration API refuses the whole push otherwise)
  mock.fresh()
  local validate = require("portico.validate")
  local function ok(fields) return validate.plugin("mtls", mtls(fields)) == nil end
  R.check("validate: a client-cert instance with every field", ok({ errorPage = "https://errors.example.com:8443/cert?x=1&y=%20", matchCn = "^CN=client[0-9]+,O=Acme$", passCertificate = true }))
  R.check("validate: verify off without caId", ok({ verify = "off" }))
  R.check("validate: an unknown verify mode is refused", not ok({ verify = "require" }))
  R.check("validate: a caId that is not 30 hex digits is refused", not ok({ caId = "abc" }))
  for _, bad in ipairs({ "https://user@evil.example/", "https://a.example/$host", "https://a.example/x y", "https://a.example/\r\nSet-Cookie: x=1", "javascript:alert(1)", "/relative", "https://a.example/\"x" }) do
    R.check("validate: errorPage " .. bad:gsub("[\r\n]", "\\n") .. " is refused", not ok({ errorPage = bad }))
  end
  for _, bad in ipairs({ "CN=a;b", "CN=a}", "CN=a{2}", "CN=a#", "CN=\"a\"", "CN=a\nb", "CN=a\0" }) do
    R.check("validate: matchCn " .. bad:gsub("%c", "?") .. " is refused", not ok({ matchCn = bad }))
  end
end

R.done()
