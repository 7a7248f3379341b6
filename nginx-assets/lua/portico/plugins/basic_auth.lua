-- basic-auth: "Authorization: Basic base64(user:password)" checked against the consumers of the plugin's
-- namespace (ConsumerEntry.basic). Password hash formats:
--   sha256$<salt>$<hex>  hex = lower-case hex SHA-256 of the bytes of <salt> exactly as written in the hash
--                        (the hex text itself, not the bytes it encodes) followed by the password's bytes;
--   {SHA}<base64>        htpasswd's SHA-1: base64 of SHA-1(password);
--   $2a$ / $2b$ / $2y$   bcrypt, verified with libxcrypt.
-- bcrypt costs milliseconds to seconds of the worker's event loop, so a worker remembers outcomes for 60 s, keyed
-- by (user name, SHA-256 of the password) and tied to the stored hash (a changed hash is verified again), and
-- spends at most BCRYPT_BUDGET seconds of each second computing new ones: past that the client gets 429 with
-- Retry-After: 1 rather than every other request on the worker waiting. A single check is bounded too: crypto.lua
-- never runs a bcrypt cost over 12 or sha-crypt over 500,000 rounds (about 0.2 s each). An unknown user's password
-- is checked against the realm's typical hash (its timing does not reveal which users exist). Failure → 401 with
-- WWW-Authenticate: Basic realm="<realm>".
-- Only the consumer's name is ever logged, never a user's password.
local consumers = require("portico.plugins.consumers")
local crypto = require("portico.plugins.crypto")
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "basic-auth"
_M.order = 4
-- Identifies the client (a consumer): a consumer's own plugins replace or join only those that run after the last
-- of these (plugins.lua).
_M.auth = true
-- May be flagged satisfyAny (ingress-nginx's `satisfy any`, plugins.lua).
_M.satisfy_any = true

local CACHE_SECONDS = 60
local CACHE_MAX = 4096
local BCRYPT_BUDGET = 0.2 -- seconds of bcrypt per second and worker

local cache, cached = {}, 0           -- key -> { hash, ok, until }
local window, spent = 0, 0            -- bcrypt time spent in the current second

local function bcrypt_verify(username, password, hash)
  local now = ngx.now()
  local key = username .. "\0" .. crypto.sha256(password)
  local c = cache[key]
  if c and c.hash == hash and c.until_ > now then return c.ok end
  local sec = math.floor(now)
  if sec ~= window then window, spent = sec, 0 end
  if spent >= BCRYPT_BUDGET then return nil, "busy" end
  local out = crypto.bcrypt(password, hash)
  if ngx.update_time then ngx.update_time() end
  spent = spent + (ngx.now() - now)
  local ok = out ~= nil and crypto.equal(out, hash)
  if cached >= CACHE_MAX then cache, cached = {}, 0 end
  if not c then cached = cached + 1 end
  cache[key] = { hash = hash, ok = ok, until_ = now + CACHE_SECONDS }
  return ok
end

-- True when password matches the stored hash; nil, "busy" when the bcrypt budget is spent.
function _M.verify(username, password, hash)
  local salt, hex = hash:match("^sha256%$([^$]+)%$(%x+)$")
  if salt then return crypto.equal(crypto.sha256_hex(salt .. password), hex:lower()) end
  local b64 = hash:match("^{SHA}(.+)$")
  if b64 then return crypto.equal(crypto.sha1_base64(password), b64) end
  local asalt = hash:match("^%$apr1%$([^$]+)%$")
  if asalt then return crypto.equal(crypto.apr1(password, asalt), hash) end
  -- bcrypt, and the crypt(3) schemes of htpasswd files (md5 "$1$", sha256 "$5$", sha512 "$6$", DES): libxcrypt,
  -- slow by design — cached and bounded per worker.
  if hash:match("^%$2[aby]%$") or hash:match("^%$[156]%$") or hash:match("^[./%w][./%w]" .. string.rep("[./%w]", 11) .. "$") then
    return bcrypt_verify(username, password, hash)
  end
  return false
end

local function credentials()
  local h = ngx.var.http_authorization
  if not h then return nil end
  local b64 = h:match("^%s*[Bb][Aa][Ss][Ii][Cc]%s+([%w+/=]+)%s*$")
  if not b64 then return nil end
  local plain = ngx.decode_base64(b64)
  if not plain then return nil end
  local user, pass = plain:match("^([^:]*):(.*)$")
  return user, pass
end

local function access(self, ctx)
  local user, pass = credentials()
  if not user then return util.deny(401, self.challenge) end
  -- Users of the plugin itself (an ingress-nginx auth-secret), else the Consumers of the namespace.
  local entry
  if self.users then
    local h = self.users[user]
    entry = h and { hash = h } or nil
  else
    entry = consumers.by_user(self.ns, user)
  end
  local ok, err
  if entry then
    ok, err = _M.verify(user, pass, entry.hash)
  else
    -- An unknown user costs what a known one typically does: the password is checked against the realm's typical
    -- hash (same scheme and cost, crypto.typical; same cache and budget) and refused whatever the outcome, so the
    -- answer's timing does not tell which users exist.
    local dummy
    if self.users then dummy = self.typical else dummy = consumers.typical(self.ns) end
    if dummy then ok, err = _M.verify(user, pass, dummy) end
    if err ~= "busy" then return util.deny(401, self.challenge) end
  end
  if err == "busy" then
    util.log_every("basic-auth:busy", ngx.WARN, "portico: basic-auth ", self.name, ": ", BCRYPT_BUDGET * 1000,
      " ms of bcrypt per second spent in this worker; answering 429")
    return util.deny(429, { ["Retry-After"] = "1" })
  end
  if not ok then
    local who = entry.consumer and ("consumer " .. entry.consumer.name) or "a user of the plugin"
    util.log_every("basic-auth:" .. who, ngx.INFO, "portico: basic-auth ", self.name, ": wrong password for ", who)
    return util.deny(401, self.challenge)
  end
  if entry.consumer then consumers.identify(ctx, entry.consumer) end
  if self.hide then ngx.req.clear_header("Authorization") end
  return false
end

local function users_of(list)
  if type(list) ~= "table" then return nil end
  local out, hashes = {}, {}
  for _, u in ipairs(list) do
    if out[u.username] == nil then out[u.username] = u.hash end
    hashes[#hashes + 1] = u.hash
  end
  return out, crypto.typical(hashes)
end

function _M.new(conf)
  local users, typical = users_of(conf.users)
  return {
    ns = conf.namespace,
    name = conf.name or "",
    challenge = { ["WWW-Authenticate"] = 'Basic realm="' .. (conf.realm or "portico") .. '"' },
    hide = conf.hideCredentials == true,
    users = users,
    typical = typical,
    access = access,
  }
end

-- For tests.
function _M._cache() return cache end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_array, bool_or_nil = C.str, C.is_array, C.bool_or_nil

-- The basic-auth fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  local err = C.namespace(p.namespace)
  if err then return err end
  if p.realm ~= nil and (not str(p.realm, 256, "^[\32-\126]+$") or p.realm:find('["\\]')) then return "invalid realm" end
  if not bool_or_nil(p.hideCredentials) then return "hideCredentials must be a boolean" end
  if p.users ~= nil then
    if not is_array(p.users) or #p.users == 0 or #p.users > 10000 then return "users must be a non-empty array" end
    for _, u in ipairs(p.users) do
      if type(u) ~= "table" or not str(u.username, 128, "^[\33-\57\59-\126]+$") then return "invalid user name" end
      if not crypto.known_hash(u.hash) then return "unsupported password hash (or cost over the bound) for " .. u.username end
    end
  end
end

return _M
