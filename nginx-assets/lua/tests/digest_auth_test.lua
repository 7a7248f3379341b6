-- Unit tests for the digest-auth plugin (HTTP Digest, MD5, qop=auth) with a mocked ngx: a client written here
-- answers the plugin's challenges as RFC 7616 says (HA1, HA2, response), through the plugin engine.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local REALM = "Team Area"
local crypto -- loaded after the mock is installed

local function setup(fields, o)
  local T = mock.fresh(o)
  crypto = require("portico.plugins.crypto")
  local users = {
    { username = "ann", ha1 = crypto.md5_hex("ann:" .. REALM .. ":pa55word") },
    { username = "bob", ha1 = crypto.md5_hex("bob:" .. REALM .. ":s3cret"):upper() },
  }
  local p = { name = "ns/digest", type = "digest-auth", realm = REALM, users = users }
  for k, v in pairs(fields or {}) do p[k] = v end
  local store = require("portico.store")
  local v, err = store.apply_all({ p = { upsert = { d = p } } })
  assert(v, err)
  return T, require("portico.plugins")
end

-- One request through the plugin location (plugins "d"): { status, proxied, headers }.
local function request(T, engine, o)
  T.headers = {}
  for k, v in pairs(o.headers or {}) do T.headers[k:lower()] = v end
  T.method = o.method or "GET"
  T.ngx.ctx = {}
  T.ngx.status = 0
  T.exited = nil
  T.printed = {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.portico_plugins = o.plugins or "d"
  v.remote_addr = "192.0.2.10"
  v.uri = o.path or "/"
  v.request_uri = o.target or o.path or "/"
  engine.access()
  local proxied = T.exited == nil
  if proxied then T.ngx.status = 200 end
  local status = T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  local out = {}
  for k, x in pairs(T.resp_headers) do out[k] = x end
  return { status = status, proxied = proxied, headers = out }
end

-- The challenge's parameters.
local function params(h)
  local out = {}
  for k, q, t in tostring(h):gmatch('(%w+)=(%b"")') do out[k] = q:sub(2, -2) end
  for k, t in tostring(h):gmatch('(%w+)=([%w]+)') do out[k] = out[k] or t end
  return out
end

-- The client's Authorization for a challenge's nonce (RFC 7616, qop=auth).
local function answer(o)
  local ha1 = crypto.md5_hex(o.user .. ":" .. (o.hrealm or REALM) .. ":" .. o.password)
  local ha2 = crypto.md5_hex((o.method or "GET") .. ":" .. o.uri)
  local nc = o.nc or "00000001"
  local cnonce = o.cnonce or "0a4f113b"
  local resp = crypto.md5_hex(ha1 .. ":" .. o.nonce .. ":" .. nc .. ":" .. cnonce .. ":auth:" .. ha2)
  local parts = {
    'username="' .. o.user .. '"', 'realm="' .. (o.realm or REALM) .. '"', 'nonce="' .. o.nonce .. '"',
    'uri="' .. o.uri .. '"', "qop=" .. (o.qop or "auth"), "nc=" .. nc, 'cnonce="' .. cnonce .. '"',
    'response="' .. (o.response or resp) .. '"',
  }
  if o.opaque then parts[#parts + 1] = 'opaque="' .. o.opaque .. '"' end
  if o.algorithm then parts[#parts + 1] = "algorithm=" .. o.algorithm end
  return "Digest " .. table.concat(parts, ", ")
end

------------------------------------------------------------------------------------------------------- handshake
do
  local T, engine = setup()
  local r = request(T, engine, { path = "/a" })
  local h = r.headers["www-authenticate"]
  local c = params(h)
  R.check("digest: no credentials → 401 with a Digest challenge", r.status == 401 and h:find('^Digest realm="Team Area", qop="auth", algorithm=MD5, nonce="%x+", opaque="%x+"$') ~= nil, h)
  R.check("digest: the nonce is 64 hex digits", c.nonce and #c.nonce == 64 and not c.nonce:find("[^0-9a-f]"), c.nonce)
  local r2 = request(T, engine, { path = "/a" })
  R.check("digest: every challenge has a new nonce", params(r2.headers["www-authenticate"]).nonce ~= c.nonce)

  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/a", opaque = c.opaque }) } })
  R.check("digest: the right answer passes", r.proxied, r.status)
  R.check("digest: …and the backend does not get the Authorization header", T.headers.authorization == nil)
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "bob", password = "s3cret", nonce = c.nonce, uri = "/a", nc = "00000002" }) } })
  R.check("digest: an upper-case HA1 in the configuration works, opaque may be left out", r.proxied, r.status)
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "nope", nonce = c.nonce, uri = "/a", nc = "00000003" }) } })
  R.check("digest: a wrong password → 401, not stale", r.status == 401 and not r.headers["www-authenticate"]:find("stale"), r.headers["www-authenticate"])
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "zed", password = "pa55word", nonce = c.nonce, uri = "/a", nc = "00000003" }) } })
  R.check("digest: an unknown user → 401, not stale", r.status == 401 and not r.headers["www-authenticate"]:find("stale"))
  R.check("digest: no hash, header or user name in the logs", not T.logged(nil, "zed") and not T.logged(nil, "ann") and not T.logged(nil, c.nonce))

  -- Replays: the same nc again, or a lower one, is refused with stale=true; a higher one passes.
  local auth3 = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/a", nc = "00000003" })
  r = request(T, engine, { path = "/a", headers = { authorization = auth3 } })
  R.check("digest: nc 3 on the same nonce passes", r.proxied)
  r = request(T, engine, { path = "/a", headers = { authorization = auth3 } })
  R.check("replay: the same answer again → 401 stale=true", r.status == 401 and r.headers["www-authenticate"]:find(", stale=true$") ~= nil, r.headers["www-authenticate"])
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/a", nc = "00000002" }) } })
  R.check("replay: a lower nc → 401 stale=true", r.status == 401 and r.headers["www-authenticate"]:find("stale=true") ~= nil)
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/a", nc = "0000000A" }) } })
  R.check("replay: a higher nc passes", r.proxied)
  R.check("replay: one zone entry per nonce, expiring with it", T.ngx.shared.portico_digest:get(c.nonce) == 10 and T.ngx.shared.portico_digest:ttl(c.nonce) <= 301)

  -- Expiry: the right answer for a nonce older than its lifetime → stale=true; a wrong one → not stale.
  T.clock = T.clock + 301
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/a", nc = "0000000b" }) } })
  R.check("expiry: the right answer for an expired nonce → 401 stale=true", r.status == 401 and r.headers["www-authenticate"]:find("stale=true") ~= nil)
  local fresh = params(r.headers["www-authenticate"]).nonce
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "nope", nonce = c.nonce, uri = "/a", nc = "0000000c" }) } })
  R.check("expiry: a wrong answer for an expired nonce → 401, not stale", r.status == 401 and not r.headers["www-authenticate"]:find("stale"))
  r = request(T, engine, { path = "/a", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = fresh, uri = "/a" }) } })
  R.check("expiry: the new nonce works", r.proxied)
  R.check("expiry: the old nonce's zone entry is gone", T.ngx.shared.portico_digest:get(c.nonce) == nil)
end

do
  -- An instance's own nonce lifetime (nonceSeconds; annotations leave it at 300).
  local T, engine = setup({ nonceSeconds = 5 })
  local c = params(request(T, engine, { path = "/" }).headers["www-authenticate"])
  T.clock = T.clock + 5
  local r = request(T, engine, { path = "/", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/" }) } })
  R.check("nonceSeconds: a nonce is good up to its instance's lifetime", r.proxied)
  T.clock = T.clock + 1
  r = request(T, engine, { path = "/", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/", nc = "00000002" }) } })
  R.check("nonceSeconds: …and stale after it", r.status == 401 and r.headers["www-authenticate"]:find("stale=true") ~= nil)
end

---------------------------------------------------------------------------------------------------------- forgery
do
  local T, engine = setup()
  local c = params(request(T, engine, { path = "/" }).headers["www-authenticate"])
  local function try(nonce, password)
    return request(T, engine, { path = "/", headers = { authorization = answer({ user = "ann", password = password or "pa55word", nonce = nonce, uri = "/" }) } })
  end
  local function refused(r) return r.status == 401 and not r.proxied end
  local function stale(r) return r.headers["www-authenticate"]:find("stale=true") ~= nil end
  -- A client's own nonce, and a changed time stamp (to make an old nonce young): never let in. stale=true only when
  -- the answer is right for that nonce (the client knows the password: RFC 7616), never for a wrong one.
  local forged = string.format("%08x", T.clock) .. string.rep("0", 56)
  local r = try(forged)
  R.check("forgery: a made-up nonce → 401 (stale=true only as the answer is right for it)", refused(r) and stale(r))
  r = try(forged, "nope")
  R.check("forgery: a made-up nonce with a wrong answer → 401, not stale", refused(r) and not stale(r))
  local restamped = string.format("%08x", T.clock + 100) .. c.nonce:sub(9)
  r = try(restamped)
  R.check("forgery: a nonce with another time stamp → 401", refused(r) and stale(r))
  r = try(restamped, "nope")
  R.check("forgery: …with a wrong answer, not stale", refused(r) and not stale(r))
  r = try("NOTHEX")
  R.check("forgery: a malformed nonce → 401", refused(r))
  R.check("forgery: no nonce was recorded for any of them", T.ngx.shared.portico_digest:get(forged) == nil and T.ngx.shared.portico_digest:get(restamped) == nil)
  -- Another start of nginx (a new key): an earlier nonce is not good; its right answer gets stale=true (the browser
  -- retries without asking the user), as does one of another replica.
  local T2, engine2 = setup()
  r = request(T2, engine2, { path = "/", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/" }) } })
  R.check("forgery: after a restart (new key) an old nonce with the right answer → 401 stale=true", refused(r) and stale(r))
  r = request(T2, engine2, { path = "/", headers = { authorization = answer({ user = "ann", password = "nope", nonce = c.nonce, uri = "/" }) } })
  R.check("forgery: …with a wrong answer → 401, not stale", refused(r) and not stale(r))
  -- The key is shared by the workers: a worker that starts later (no copy yet) reads the same key from the zone.
  local T3, engine3 = setup()
  local c3 = params(request(T3, engine3, { path = "/" }).headers["www-authenticate"])
  require("portico.plugins.digest_auth")._reset()
  r = request(T3, engine3, { path = "/", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c3.nonce, uri = "/" }) } })
  R.check("workers: a nonce issued by one worker is good at another (the key lives in portico_digest)", r.proxied)
end

------------------------------------------------------------------------------------------------- request checks
do
  local T, engine = setup()
  local function new_nonce(path) return params(request(T, engine, { path = path or "/" }).headers["www-authenticate"]) end
  local function refused(name, o)
    local c = new_nonce()
    o.user, o.password, o.nonce = o.user or "ann", o.password or "pa55word", c.nonce
    o.uri = o.uri or "/p?q=1"
    local r = request(T, engine, { path = "/p", target = "/p?q=1", headers = { authorization = answer(o) } })
    R.check(name, r.status == 401 and not r.headers["www-authenticate"]:find("stale"), r.status)
  end
  local c = new_nonce()
  local r = request(T, engine, { path = "/p", target = "/p?q=1", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/p?q=1", algorithm = "MD5" }) } })
  R.check("uri: the request target with its query passes (algorithm=MD5 named)", r.proxied)
  c = new_nonce()
  r = request(T, engine, { path = "/p", target = "/p?q=1", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/p" }) } })
  R.check("uri: …and its path without the query (some clients send that)", r.proxied)
  c = new_nonce()
  r = request(T, engine, { path = "/p", method = "POST", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/p", method = "POST" }) } })
  R.check("method: HA2 covers the request's method (POST)", r.proxied)
  do
    local c2 = new_nonce()
    local rr = request(T, engine, { path = "/p", method = "POST", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c2.nonce, uri = "/p" }) } })
    R.check("method: a GET answer sent with POST → 401", rr.status == 401)
  end
  refused("uri: an answer for another path → 401", { uri = "/other" })
  refused("realm: another realm → 401", { realm = "Other", hrealm = "Other" })
  refused("algorithm: MD5-sess is not offered → 401", { algorithm = "MD5-sess" })
  refused("algorithm: SHA-256 is not offered → 401", { algorithm = "SHA-256" })
  refused("qop: auth-int → 401", { qop = "auth-int" })
  refused("nc: 0 → 401", { nc = "00000000" })
  refused("nc: not 8 hex digits → 401", { nc = "1" })
  refused("opaque: another one → 401", { opaque = "00" })
  refused("response: not 32 hex digits → 401", { response = "abc" })
  do
    local c2 = new_nonce()
    local ha1 = crypto.md5_hex("ann:" .. REALM .. ":pa55word")
    local resp = crypto.md5_hex(ha1 .. ":" .. c2.nonce .. ":" .. crypto.md5_hex("GET:/"))
    local rfc2069 = 'Digest username="ann", realm="' .. REALM .. '", nonce="' .. c2.nonce .. '", uri="/", response="' .. resp .. '"'
    local rr = request(T, engine, { path = "/", headers = { authorization = rfc2069 } })
    R.check("qop: a client without qop (RFC 2069) is refused", rr.status == 401)
  end
  local basic = request(T, engine, { path = "/", headers = { authorization = "Basic " .. T.ngx.encode_base64("ann:pa55word") } })
  R.check("scheme: Basic credentials get the Digest challenge", basic.status == 401 and basic.headers["www-authenticate"]:find("^Digest ") ~= nil)
end

------------------------------------------------------------------------------------------------------- the parser
do
  setup()
  local d = require("portico.plugins.digest_auth")
  local p = d.parse('Digest username="a\\"b", realm="R", nc=00000001, qop=auth ,  uri="/x,y"')
  R.check("parse: quoted-pairs, commas inside quotes, spaces around commas", p and p.username == 'a"b' and p.uri == "/x,y" and p.qop == "auth" and p.nc == "00000001")
  R.check("parse: the scheme is case-insensitive, names too", d.parse('dIgEsT UserName="a"').username == "a")
  R.check("parse: a duplicate parameter is refused", d.parse('Digest username="a", username="b"') == nil)
  R.check("parse: an unterminated quote is refused", d.parse('Digest username="a') == nil)
  R.check("parse: a control character is refused", d.parse('Digest username="a\1"') == nil)
  R.check("parse: garbage after a value is refused", d.parse('Digest username="a" x') == nil)
  R.check("parse: more than 16 parameters are refused", d.parse("Digest " .. ("a=1, "):rep(16) .. "b=2") == nil)
  R.check("parse: a header over 4 KiB is refused", d.parse('Digest username="' .. ("a"):rep(4100) .. '"') == nil)
  R.check("parse: another scheme is not Digest", d.parse("Basic abc") == nil and d.parse("Digestx a=1") == nil)
end

-------------------------------------------------------------------------------------------- satisfy any, limits
do
  local T = mock.fresh()
  crypto = require("portico.plugins.crypto")
  local store = require("portico.store")
  local users = { { username = "ann", ha1 = crypto.md5_hex("ann:" .. REALM .. ":pa55word") } }
  assert(store.apply_all({ p = { upsert = {
    ip = { name = "ns/ip", type = "ip-restriction", allow = { "198.51.100.0/24" }, status = 403, satisfyAny = true },
    d = { name = "ns/digest", type = "digest-auth", realm = REALM, users = users, satisfyAny = true },
  } } }))
  local engine = require("portico.plugins")
  local r = request(T, engine, { plugins = "ip,d" })
  R.check("satisfy any: neither → the 401 with the Digest challenge", r.status == 401 and r.headers["www-authenticate"]:find("^Digest") ~= nil)
  local c = params(r.headers["www-authenticate"])
  r = request(T, engine, { plugins = "ip,d", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/" }) } })
  R.check("satisfy any: the digest answer alone lets the request through", r.proxied)
end

do
  -- The zone full: a right answer cannot be recorded → 503, never an untracked pass.
  local T, engine = setup(nil, { digest = 600 })
  local c = params(request(T, engine, { path = "/" }).headers["www-authenticate"])
  local ok = true
  for i = 1, 100 do
    local fine = T.ngx.shared.portico_digest:safe_set("filler" .. i, ("x"):rep(40))
    if not fine then break end
    ok = fine
  end
  local r = request(T, engine, { path = "/", headers = { authorization = answer({ user = "ann", password = "pa55word", nonce = c.nonce, uri = "/" }) } })
  R.check("zone full: the right answer is refused with 503", ok and r.status == 503, r.status)
  R.check("zone full: logged", T.logged(T.ngx.ERR, "portico_digest"))
end

------------------------------------------------------------------------------------------------------------- check
do
  setup()
  local validate = require("portico.validate")
  local good = { name = "ns/d", type = "digest-auth", realm = REALM, users = { { username = "ann", ha1 = ("a"):rep(32) } } }
  R.check("validate: a digest-auth instance passes", validate.plugin("d", good) == nil, validate.plugin("d", good))
  local function bad(name, change, want)
    local p = { name = "ns/d", type = "digest-auth", realm = REALM, users = { { username = "ann", ha1 = ("a"):rep(32) } } }
    change(p)
    local err = validate.plugin("d", p)
    R.check(name, err ~= nil and err:find(want, 1, true) ~= nil, err)
  end
  bad("validate: a realm with a quote is refused", function(p) p.realm = 'a"b' end, "invalid realm")
  bad("validate: a realm with \":\" is refused (htdigest cannot hold it)", function(p) p.realm = "a:b" end, "invalid realm")
  bad("validate: an HA1 that is not 32 hex digits is refused", function(p) p.users[1].ha1 = "abc" end, "ha1")
  bad("validate: no users is refused", function(p) p.users = {} end, "users")
  bad("validate: nonceSeconds over an hour is refused", function(p) p.nonceSeconds = 3601 end, "nonceSeconds")
  bad("validate: a user name with \":\" is refused", function(p) p.users[1].username = "a:b" end, "user name")
end

R.done()
