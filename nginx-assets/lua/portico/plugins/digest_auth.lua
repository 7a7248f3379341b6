-- digest-auth: HTTP Digest authentication (RFC 7616, as RFC 2617 clients speak it) with the MD5 algorithm and
-- qop=auth, against the users of the plugin (ingress-nginx's auth-type: digest with an htdigest auth-secret): each
-- user's HA1 = MD5(user:realm:password), never the password. Clients that send no qop (RFC 2069) are refused: the
-- nc counter is what makes a replayed answer recognisable.
--
-- Nonces are stateless and unforgeable: hex(issue time, 4 bytes) .. hex(8 random bytes) .. hex(HMAC-SHA1 over both
-- and the instance), keyed by 32 random bytes drawn once per nginx start (kept in the shared dict portico_digest, so
-- every worker, and a reload, knows them; a restart or another Portico replica does not). A nonce is good for
-- NONCE_SECONDS (or the instance's nonceSeconds) after it was issued. An answer that is right for a nonce that is not
-- good — expired, or not made with this start's key — gets a new challenge with stale=true (as RFC 7616 asks: the
-- client knows the password and retries without asking the user); a wrong answer never gets stale=true.
-- Replays: the highest nc answered per nonce is kept in portico_digest until the nonce expires, and an answer must
-- bring a higher one (a reused or lower nc → stale=true, so a client that sent requests out of order just takes a
-- new nonce). One entry per nonce in use, not per request; the zone full → 503, never an untracked success. Workers
-- race only within one request's read-and-write of that entry (no yield between them).
--
-- Checks, each failing with 401 and a new challenge: the header parses (bounded: 4 KiB, 16 parameters, no
-- duplicates), realm is the plugin's, algorithm absent or MD5, qop=auth, nc 8 hex digits, cnonce present, uri the
-- request's target (or its path without the query, as some clients send it); the response (constant-time compare;
-- an unknown user is checked against a dummy HA1 so the timing does not tell which users exist); then the nonce's MAC
-- and age, then its nc. Only the user name's presence is ever logged, never a hash or the header. A request that
-- passes goes upstream without its Authorization header, as under ingress-nginx.
local crypto = require("portico.plugins.crypto")
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "digest-auth"
_M.order = 5
-- Identifies the client (a user of the plugin; no consumers): plugins.lua counts it among the auth plugins.
_M.auth = true
-- May be flagged satisfyAny (ingress-nginx's `satisfy any`, plugins.lua).
_M.satisfy_any = true

_M.NONCE_SECONDS = 300
local MAX_HEADER = 4096
local MAX_PARAMS = 16
local DICT = "portico_digest"

local byte, sub, find, lower = string.byte, string.sub, string.find, string.lower

-- ---- the nonce key: 32 random bytes per nginx start, shared by the workers ----
local key
local function nonce_key()
  if key then return key end
  local dict = ngx.shared[DICT]
  if not dict then return nil end
  local k = dict:get("key")
  if not k then
    local fresh = crypto.random_bytes(32)
    if not fresh then return nil end
    dict:safe_add("key", fresh) -- another worker may have won: read what is there
    k = dict:get("key")
  end
  key = k
  return k
end

local function mac(k, stamp, id)
  return crypto.hex(ngx.hmac_sha1(k, stamp .. "\0" .. id))
end

-- A new nonce for instance `id`, or nil (no key or no randomness: the caller answers 503).
local function new_nonce(id)
  local k = nonce_key()
  local r = k and crypto.random_bytes(8)
  if not r then return nil end
  local stamp = string.format("%08x", ngx.time() % 4294967296) .. crypto.hex(r)
  return stamp .. mac(k, stamp, id)
end

-- "ok", "expired" or "forged"; and the seconds the nonce has left when "ok".
local function check_nonce(nonce, id, lifetime)
  if #nonce ~= 64 or find(nonce, "[^0-9a-f]") then return "forged" end
  local k = nonce_key()
  if not k then return "forged" end
  local stamp = sub(nonce, 1, 24)
  if not crypto.equal(mac(k, stamp, id), sub(nonce, 25)) then return "forged" end
  local age = (ngx.time() % 4294967296) - tonumber(sub(stamp, 1, 8), 16)
  if age < 0 then age = age + 4294967296 end
  if age > lifetime then return "expired" end
  return "ok", lifetime - age
end

-- ---- the Authorization header ----
-- RFC 7616's credentials: "Digest" 1*SP auth-param *( OWS "," OWS auth-param ), auth-param = token BWS "=" BWS
-- ( token / quoted-string ). Names are case-insensitive; a duplicate or anything else malformed → nil.
local TOKEN = "^[!#$%%&'*+%-.^_`|~%w]+"
function _M.parse(h)
  if type(h) ~= "string" or #h > MAX_HEADER then return nil end
  local s, e = find(h, "^%s*[Dd][Ii][Gg][Ee][Ss][Tt] +")
  if not s then return nil end
  local pos, n, out = e + 1, #h, {}
  local count = 0
  while true do
    local ns, ne = find(h, TOKEN, pos)
    if not ns then return nil end
    local name = lower(sub(h, ns, ne))
    pos = ne + 1
    local _, eq = find(h, "^[ \t]*=[ \t]*", pos)
    if not eq then return nil end
    pos = eq + 1
    local value
    if byte(h, pos) == 34 then -- quoted-string, with quoted-pairs
      local parts, i = {}, pos + 1
      while true do
        local c = byte(h, i)
        if not c then return nil end
        if c == 34 then break end
        if c == 92 then
          i = i + 1
          c = byte(h, i)
          if not c then return nil end
        end
        if c < 32 and c ~= 9 or c == 127 then return nil end
        parts[#parts + 1] = string.char(c)
        i = i + 1
      end
      value = table.concat(parts)
      pos = i + 1
    else
      local vs, ve = find(h, TOKEN, pos)
      if not vs then return nil end
      value = sub(h, vs, ve)
      pos = ve + 1
    end
    if out[name] ~= nil then return nil end
    count = count + 1
    if count > MAX_PARAMS then return nil end
    out[name] = value
    local _, ce = find(h, "^[ \t]*,[ \t]*", pos)
    if ce then
      pos = ce + 1
    else
      local _, we = find(h, "^[ \t]*$", pos)
      if not we then return nil end
      break
    end
    if pos > n then break end
  end
  return out
end

-- ---- the access handler ----
local function challenge(self, stale)
  local nonce = new_nonce(self.id)
  if not nonce then
    util.log_every("digest-auth:nonce", ngx.ERR, "portico: digest-auth ", self.name,
      ": no nonce key (shared dict ", DICT, " missing or full, or no randomness); answering 503")
    return util.deny(503)
  end
  return util.deny(401, { ["WWW-Authenticate"] = self.prefix .. nonce .. self.suffix .. (stale and ", stale=true" or "") })
end

-- The request's target as the client wrote it, and the same without its query (RFC 7616: the digest-uri is the
-- request-target; some clients leave the query out).
local function uri_matches(uri)
  local target = ngx.var.request_uri
  if not target then return false end
  if uri == target then return true end
  local q = find(target, "?", 1, true)
  return q ~= nil and uri == sub(target, 1, q - 1)
end

local function access(self, ctx)
  local p = _M.parse(ngx.var.http_authorization)
  if not p then return challenge(self, false) end
  local user, nonce, uri, response = p.username, p.nonce, p.uri, p.response
  local nc, cnonce, qop = p.nc, p.cnonce, p.qop
  if not (user and nonce and uri and response and nc and cnonce and qop) or p["username*"] or p.realm ~= self.realm
    or (p.userhash and lower(p.userhash) ~= "false") or (p.algorithm and lower(p.algorithm) ~= "md5")
    or lower(qop) ~= "auth" or not find(nc, "^%x%x%x%x%x%x%x%x$") or tonumber(nc, 16) == 0
    or #cnonce == 0 or #cnonce > 256 or #user > 128 or not find(response, "^%x+$") or #response ~= 32
    or (p.opaque and p.opaque ~= self.opaque) or not uri_matches(uri) then
    return challenge(self, false)
  end
  local state, left = check_nonce(nonce, self.id, self.lifetime)
  local ha1 = self.users[user]
  local known = ha1 ~= nil
  if not known then ha1 = self.dummy end
  local ha2 = crypto.md5_hex(ngx.req.get_method() .. ":" .. uri)
  local want = crypto.md5_hex(ha1 .. ":" .. nonce .. ":" .. nc .. ":" .. cnonce .. ":" .. qop .. ":" .. ha2)
  if not (crypto.equal(want, lower(response)) and known) then
    util.log_every("digest-auth:" .. self.id, ngx.INFO, "portico: digest-auth ", self.name, ": ",
      known and "wrong answer for a user of the plugin" or "unknown user")
    return challenge(self, false)
  end
  -- The right answer, for a nonce that is not (or no longer) good: stale=true (see above).
  if state ~= "ok" then return challenge(self, true) end
  -- And with an nc higher than any before on this nonce.
  local dict = ngx.shared[DICT]
  local count = tonumber(nc, 16)
  local seen = dict:get(nonce)
  if seen and count <= seen then return challenge(self, true) end
  local ok, err = dict:safe_set(nonce, count, left + 1)
  if not ok then
    util.log_every("digest-auth:full", ngx.ERR, "portico: digest-auth ", self.name, ": shared dict ", DICT, " ", err,
      "; answering 503")
    return util.deny(503)
  end
  -- As ingress-nginx (proxy_set_header Authorization "" with auth_digest): the credentials stay here.
  ngx.req.clear_header("Authorization")
  return false
end

function _M.new(conf, id)
  local users = {}
  for _, u in ipairs(conf.users or {}) do
    if users[u.username] == nil then users[u.username] = lower(u.ha1) end
  end
  local iid = id or conf.name or ""
  local opaque = crypto.md5_hex("portico digest-auth opaque " .. iid)
  return {
    id = iid,
    name = conf.name or "",
    realm = conf.realm,
    lifetime = conf.nonceSeconds or _M.NONCE_SECONDS,
    opaque = opaque,
    -- The challenge around its nonce (realm: quotes and backslashes refused by check).
    prefix = 'Digest realm="' .. conf.realm .. '", qop="auth", algorithm=MD5, nonce="',
    suffix = '", opaque="' .. opaque .. '"',
    users = users,
    dummy = crypto.md5_hex("portico digest-auth dummy " .. iid),
    access = access,
  }
end

-- For tests: forget the worker's copy of the nonce key.
function _M._reset() key = nil end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_array, is_int = C.str, C.is_array, C.is_int

-- The digest-auth fields of a PluginInstance (reconcilers/config/plugins/digest-auth.ts): nil when valid, else a
-- message.
function _M.check(p)
  if not str(p.realm, 128, "^[\32-\126]+$") or p.realm:find('["\\:]') then return "invalid realm" end
  if p.nonceSeconds ~= nil and not is_int(p.nonceSeconds, 1, 3600) then return "nonceSeconds must be 1 to 3600" end
  if not is_array(p.users) or #p.users == 0 or #p.users > 10000 then return "users must be a non-empty array of at most 10000" end
  for _, u in ipairs(p.users) do
    if type(u) ~= "table" or not str(u.username, 128, "^[\33-\57\59-\126]+$") then return "invalid user name" end
    if not str(u.ha1, 32, "^%x+$") or #u.ha1 ~= 32 then return "ha1 must be 32 hex digits" end
  end
end

return _M
