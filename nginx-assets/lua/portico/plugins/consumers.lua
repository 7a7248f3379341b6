-- Per-worker lookup index of a namespace's consumers (DataPlane.consumers[namespace]), built when an auth plugin
-- first asks and dropped when that namespace's consumers change:
--   keys[sha256 hex of a key]  -> consumer          (key-auth: the key is hashed, then looked up)
--   basic[user name]           -> { hash, consumer } (basic-auth; the first consumer listing a user name wins)
--   typical                    -> the hash unknown basic-auth users are checked against (crypto.typical)
-- A consumer is { ns, name, username, plugins } — what the engine and rate-limit need, no credentials.
local store = require("portico.store")
local crypto = require("portico.plugins.crypto")

local _M = {}

local index = {} -- namespace -> compiled index, or false (no consumers)

store.on_consumers(function(ns) index[ns] = nil end)

local function build(ns, set)
  local keys, basic, hashes = {}, {}, {}
  for _, c in ipairs(set.consumers or {}) do
    local consumer = { ns = ns, name = c.name, username = c.username, plugins = c.plugins or {} }
    for _, k in ipairs(c.keys or {}) do
      if keys[k] == nil then keys[k] = consumer end
    end
    for _, b in ipairs(c.basic or {}) do
      if basic[b.username] == nil then basic[b.username] = { hash = b.hash, consumer = consumer } end
      hashes[#hashes + 1] = b.hash
    end
  end
  return { keys = keys, basic = basic, typical = crypto.typical(hashes) }
end

function _M.get(ns)
  local ix = index[ns]
  if ix ~= nil then return ix or nil end
  local set = store.get_consumers(ns)
  ix = set and build(ns, set) or false
  index[ns] = ix
  return ix or nil
end

-- The consumer owning a key (given as lower-case sha256 hex), or nil.
function _M.by_key(ns, hex)
  local ix = _M.get(ns)
  return ix and ix.keys[hex] or nil
end

-- The namespace's typical basic-auth hash (crypto.typical), checked for unknown users; nil when it has none.
function _M.typical(ns)
  local ix = _M.get(ns)
  return ix and ix.typical or nil
end

-- { hash, consumer } for a basic-auth user name, or nil.
function _M.by_user(ns, username)
  local ix = _M.get(ns)
  return ix and ix.basic[username] or nil
end

-- Sets the identified consumer for the rest of the request: ngx.ctx (rate-limit by=consumer, the engine's
-- per-consumer plugins) and X-Consumer-Username for the backend, after removing any X-Consumer-* the client sent.
-- Identity headers a client must never supply itself: the one Portico sets replaces the client's, and the other
-- common consumer-identity names (Kong's) are removed so a backend cannot be fooled by them either. (Scanning every
-- request header for any X-Consumer-* costs more than the rest of key-auth; other names are not identity Portico
-- asserts.)
local FORGEABLE = {
  { "X-Consumer-Id", "http_x_consumer_id" }, { "X-Consumer-Custom-Id", "http_x_consumer_custom_id" },
  { "X-Credential-Identifier", "http_x_credential_identifier" },
}

function _M.identify(ctx, consumer)
  ctx.portico_consumer = consumer
  local req, var = ngx.req, ngx.var
  req.set_header("X-Consumer-Username", consumer.username)
  for i = 1, #FORGEABLE do
    local f = FORGEABLE[i]
    if var[f[2]] then req.clear_header(f[1]) end
  end
end

-- For tests.
function _M._index() return index end

return _M
