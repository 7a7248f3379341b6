-- Backend data shared between workers, applied per request without timers.
--
-- Writers (the configuration API, one request at a time from the controller) store each backend as JSON under
-- "b:<id>", bump the global version "v", and append the ids changed by that version to a change log "c:<v>".
-- Each worker keeps a decoded copy and its own version; on the next request it sees the version moved and
-- decodes only the backends listed in the change log entries it missed (a full re-read only when it fell
-- further behind than the log keeps, a log entry is missing, or right after start/reload).
local cjson = require("cjson.safe")
local peers = require("portico.peers")
local shm = require("portico.shm")
local dict = ngx.shared.portico_data

local LOG_KEEP = 4096

local _M = {}

local local_version = -1
local backends = {}        -- id -> decoded backend table
local listeners = {}       -- functions(id, backend_or_nil) called when a backend changes in this worker

function _M.on_change(fn)
  listeners[#listeners + 1] = fn
end

local function load_one(id)
  local raw = dict:get("b:" .. id)
  local b = raw and cjson.decode(raw) or nil
  backends[id] = b
  for i = 1, #listeners do listeners[i](id, b) end
end

local function full_reload()
  local fresh = {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    if k:sub(1, 2) == "b:" then fresh[k:sub(3)] = true end
  end
  for id in pairs(backends) do
    if not fresh[id] then
      backends[id] = nil
      for i = 1, #listeners do listeners[i](id, nil) end
    end
  end
  for id in pairs(fresh) do load_one(id) end
end

-- Called before every balancing decision: one shared-dict read when nothing changed.
function _M.sync()
  local v = dict:get("v") or 0
  if v == local_version then return end
  if local_version < 0 or v - local_version > LOG_KEEP or v < local_version then
    full_reload()
  else
    for n = local_version + 1, v do
      local ids = dict:get("c:" .. n)
      if not ids then full_reload(); break end
      for id in ids:gmatch("[^\n]+") do load_one(id) end
    end
  end
  local_version = v
end

function _M.get(id)
  return backends[id]
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

-- Stores one backend. A failed safe_set has already freed the old value (nginx removes an entry before storing a
-- bigger one), so the previous JSON is put back when it still fits. Returns changed (workers must re-read the
-- id), err.
local function store_one(id, b)
  local key = "b:" .. id
  local old = dict:get(key)
  local ok, err = shm.set(dict, "data", key, cjson.encode(admit(id, b)))
  if ok then return true end
  if old and dict:safe_set(key, old) then
    ngx.log(ngx.ERR, "portico: backend ", id, " keeps its previous data")
    return false, err
  end
  return old ~= nil, err
end

-- Writer side (configuration API). upsert: id -> backend table; remove: list of ids. Returns the new version,
-- or nil and an error when some backend could not be stored (the others are applied and published).
function _M.apply(upsert, remove)
  local changed, failed = {}, nil
  for id, b in pairs(upsert or {}) do
    local ch, err = store_one(id, b)
    if ch then changed[#changed + 1] = id end
    if err then failed = failed or ("shared dict portico_data is full storing backend " .. id .. ": " .. tostring(err)) end
  end
  for _, id in ipairs(remove or {}) do
    dict:delete("b:" .. id)
    changed[#changed + 1] = id
  end
  local v = dict:get("v") or 0
  if #changed > 0 then
    v = v + 1
    -- A change log entry that cannot be stored only costs the workers a full re-read (they treat a missing
    -- entry that way); the version itself is a number replaced in place.
    shm.set(dict, "data", "c:" .. v, table.concat(changed, "\n"))
    dict:delete("c:" .. (v - LOG_KEEP - 1))
    local ok, err = shm.set(dict, "data", "v", v)
    if not ok then return nil, "cannot publish data version: " .. tostring(err) end
  end
  if failed then return nil, failed end
  return v
end

function _M.version()
  return dict:get("v") or 0
end

function _M.dump()
  local out = {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    if k:sub(1, 2) == "b:" then out[k:sub(3)] = cjson.decode(dict:get(k)) end
  end
  return out
end

return _M
