-- Routing data shared between workers, applied per request without timers: backends under "b:<id>", the
-- routes of each host under "r:<host>", plugin instances under "p:<id>" and the consumers of a namespace under
-- "k:<namespace>".
--
-- Writers (the configuration API, one request at a time from the controller) store each entry as JSON, bump the
-- global version "v", and append the keys changed by that version to a change log "c:<v>". A backend and the
-- routes that use it can arrive in one request and are published under one version, so no worker ever sees a
-- route whose backend it does not have yet. Each worker keeps a decoded copy and its own version; on the next
-- request it sees the version moved and decodes only the entries listed in the change log entries it missed (a
-- full re-read only when it fell further behind than the log keeps, a log entry is missing, or right after
-- start/reload).
local cjson = require("cjson.safe")
local peers = require("portico.peers")
local shm = require("portico.shm")
local dict = ngx.shared.portico_data
-- The data's generation in shared memory (generation.lua): nil without Portico's variables module.
local generation = require("portico.generation")
if type(generation) ~= "table" then generation = nil end
local generation_get = generation and generation.get

local LOG_KEEP = 4096

local _M = {}

local local_version = -1
-- The generation seen when local_version was last brought up to date (-2: never).
local local_generation = -2
-- Per kind ("b" backends, "r" routes of a host): which entries exist (`true`), and change listeners. Nothing is
-- decoded at sync time: a backend is decoded when store.get first asks for it (and kept until it changes), a host's
-- routes when the router first needs them — so a worker holds what it serves, not all 10,000 hosts and backends.
-- Plugins and consumer sets follow the backends' pattern: decoded on first use, dropped when they change.
local entries = { b = {}, r = {}, p = {}, k = {} }
local decoded = {}         -- backend id -> decoded backend (backends asked for since their last change)
local decoded_of = { b = decoded, p = {}, k = {} }
local listeners = { b = {}, r = {}, p = {}, k = {} }

-- fn(id, present) is called when a backend changes in this worker (present: true, or nil when removed).
function _M.on_change(fn)
  local l = listeners.b
  l[#l + 1] = fn
end

-- fn(host, present) is called when the routes of a host change (present: true, or nil when removed); the routes
-- themselves are read with store.read_routes(host).
function _M.on_routes(fn)
  local l = listeners.r
  l[#l + 1] = fn
end

-- fn(id, present) when a plugin instance changes; fn(namespace, present) when a namespace's consumers change.
function _M.on_plugins(fn)
  local l = listeners.p
  l[#l + 1] = fn
end

function _M.on_consumers(fn)
  local l = listeners.k
  l[#l + 1] = fn
end

-- Whether a key exists, without copying its value out of shared memory (ttl answers "not found" for a missing
-- key; a full re-read after a reload would otherwise copy every host's and backend's JSON just to drop it).
local function exists(key)
  local ttl = dict:ttl(key)
  return ttl ~= nil
end

-- key: "b:<id>", "r:<host>", "p:<id>" or "k:<namespace>"; present: known already (full re-read) or nil (ask shared memory).
local function load_one(key, present)
  local kind, id = key:sub(1, 1), key:sub(3)
  local have = entries[kind]
  if not have or key:sub(2, 2) ~= ":" then return end
  local v
  if present ~= nil then v = present or nil else v = exists(key) or nil end
  have[id] = v
  local d = decoded_of[kind]
  if d then d[id] = nil end
  local l = listeners[kind]
  for i = 1, #l do l[i](id, v) end
end

local function full_reload()
  local fresh = {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    local kind = k:sub(1, 2)
    if kind == "b:" or kind == "r:" or kind == "p:" or kind == "k:" then fresh[k] = true end
  end
  for kind, have in pairs(entries) do
    for id in pairs(have) do
      if not fresh[kind .. ":" .. id] then
        have[id] = nil
        local d = decoded_of[kind]
        if d then d[id] = nil end
        local l = listeners[kind]
        for i = 1, #l do l[i](id, nil) end
      end
    end
  end
  for k in pairs(fresh) do load_one(k, true) end
end

-- Called before every balancing decision: when nothing changed, one read of the generation (or, without it, of the
-- shared dictionary's version). The generation is read before the version: a version published after that read
-- bumps it again, and the next request looks again.
function _M.sync()
  local g = -1
  if generation_get then
    g = generation_get()
    if g >= 0 and g == local_generation then return end
  end
  local v = dict:get("v") or 0
  if v ~= local_version then
    if local_version < 0 or v - local_version > LOG_KEEP or v < local_version then
      full_reload()
    else
      for n = local_version + 1, v do
        local ids = dict:get("c:" .. n)
        if not ids then full_reload(); break end
        for key in ids:gmatch("[^\n]+") do load_one(key) end
      end
    end
    local_version = v
  end
  if g >= 0 then local_generation = g end
end

-- The generation the worker's data was last synchronized at (negative without Portico's variables module): the
-- router's native path (native.lua) belongs to it.
function _M.generation() return local_generation end

-- A backend as stored now (decoded once per change), or nil.
function _M.get(id)
  local b = decoded[id]
  if b ~= nil or not entries.b[id] then return b end
  local raw = dict:get("b:" .. id)
  b = raw and cjson.decode(raw) or nil
  decoded[id] = b
  return b
end

-- ingress-nginx's name of a backend's upstream, "<namespace>-<service>-<port>", for the access log's
-- $proxy_upstream_name: backend ids are "<namespace>_<service>_<port>"; an id of another shape is its own name (as
-- the $portico_main_upstream map of http.hbs, which derives it where no Lua set it). Made once per id.
local upstream_names, upstream_names_n = {}, 0
function _M.upstream_name(id)
  local n = upstream_names[id]
  if n then return n end
  local ns, svc, port = id:match("^([^_]+)_([^_]+)_([^_]+)$")
  n = ns and (ns .. "-" .. svc .. "-" .. port) or id
  if upstream_names_n >= 10000 then upstream_names, upstream_names_n = {}, 0 end
  upstream_names[id], upstream_names_n = n, upstream_names_n + 1
  return n
end

local function get_decoded(kind, id)
  local d = decoded_of[kind]
  local v = d[id]
  if v ~= nil or not entries[kind][id] then return v end
  local raw = dict:get(kind .. ":" .. id)
  v = raw and cjson.decode(raw) or nil
  d[id] = v
  return v
end

-- Whether the stored plugin instance's JSON contains `text` (literally), without decoding it: false when absent.
function _M.plugin_has(id, text)
  if not entries.p[id] then return false end
  local raw = dict:get("p:" .. id)
  return raw ~= nil and raw:find(text, 1, true) ~= nil
end

-- A plugin instance (PluginInstance) as stored now, or nil. The table is shared: callers must not change it.
function _M.get_plugin(id)
  return get_decoded("p", id)
end

-- The ConsumerSet of a namespace as stored now, or nil. Shared, read-only.
function _M.get_consumers(ns)
  return get_decoded("k", ns)
end

-- The routes of a host as stored now (decoded), or nil.
function _M.read_routes(host)
  local raw = dict:get("r:" .. host)
  return raw and cjson.decode(raw) or nil
end

-- Drops endpoints nginx must never be handed (see peers.lua), each with a log line and a count.
local function admit(id, b)
  local eps = b.endpoints
  if type(eps) ~= "table" then return b end
  local kept = {}
  for i = 1, #eps do
    local e = eps[i]
    local host, why = peers.check(e.address)
    if host and peers.valid_port(e.port) then
      kept[#kept + 1] = e
    else
      shm.count("rejected_endpoints")
      ngx.log(ngx.WARN, "portico: backend ", id, ": endpoint ", tostring(e.address), ":", tostring(e.port),
        " refused (", why or "invalid port", ")")
    end
  end
  b.endpoints = kept
  return b
end

-- Stores one entry. A failed safe_set has already freed the old value (nginx removes an entry before storing a
-- bigger one), so the previous JSON is put back when it still fits. Returns changed (workers must re-read the
-- key), err.
local function store_one(key, json)
  local old = dict:get(key)
  local ok, err = shm.set(dict, "data", key, json)
  if ok then return true end
  if old and dict:safe_set(key, old) then
    ngx.log(ngx.ERR, "portico: ", key, " keeps its previous data")
    return false, err
  end
  return old ~= nil, err
end

local WHAT = { b = "backend", r = "routes of host", p = "plugin", k = "consumers of namespace" }

-- Writer side (configuration API): one version for everything in `changes`, which maps a kind ("b" backends,
-- "r" routes, "p" plugins, "k" consumer sets) to { upsert = {id -> table}, remove = {id...} }. What is referred
-- to is stored before what refers to it (backends, plugins, consumers, then routes) and removed after it, though
-- workers only look once the version is published. Returns the new version, or
-- nil and an error when some entry could not be stored (the others are applied and published).
function _M.apply_all(changes)
  local changed, failed = {}, nil
  local function put(kind, id, v)
    local json = kind == "b" and cjson.encode(admit(id, v)) or cjson.encode(v)
    local ch, err = store_one(kind .. ":" .. id, json)
    if ch then changed[#changed + 1] = kind .. ":" .. id end
    if err then failed = failed or ("shared dict portico_data is full storing " .. WHAT[kind] .. " " .. id .. ": " .. tostring(err)) end
  end
  local function drop(kind, id)
    dict:delete(kind .. ":" .. id)
    changed[#changed + 1] = kind .. ":" .. id
  end
  local b, r, p, k = changes.b or {}, changes.r or {}, changes.p or {}, changes.k or {}
  for id, v in pairs(b.upsert or {}) do put("b", id, v) end
  for id, v in pairs(p.upsert or {}) do put("p", id, v) end
  for id, v in pairs(k.upsert or {}) do put("k", id, v) end
  for id, v in pairs(r.upsert or {}) do put("r", id, v) end
  for _, id in ipairs(r.remove or {}) do drop("r", id) end
  for _, id in ipairs(k.remove or {}) do drop("k", id) end
  for _, id in ipairs(p.remove or {}) do drop("p", id) end
  for _, id in ipairs(b.remove or {}) do drop("b", id) end
  local v = dict:get("v") or 0
  if #changed > 0 then
    v = v + 1
    -- A change log entry that cannot be stored only costs the workers a full re-read (they treat a missing
    -- entry that way); the version itself is a number replaced in place.
    shm.set(dict, "data", "c:" .. v, table.concat(changed, "\n"))
    dict:delete("c:" .. (v - LOG_KEEP - 1))
    local ok, err = shm.set(dict, "data", "v", v)
    if not ok then return nil, "cannot publish data version: " .. tostring(err) end
    if generation then generation.bump() end
  end
  if failed then return nil, failed end
  return v
end

-- Backends only (upsert: id -> backend table; remove: list of ids).
function _M.apply(upsert, remove)
  return _M.apply_all({ b = { upsert = upsert, remove = remove } })
end

function _M.version()
  return dict:get("v") or 0
end

-- Every stored entry of one kind ("b", "r", "p" or "k"), decoded.
function _M.dump(kind)
  local prefix = (kind or "b") .. ":"
  local out = {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    if k:sub(1, 2) == prefix then out[k:sub(3)] = cjson.decode(dict:get(k)) end
  end
  return out
end

return _M
