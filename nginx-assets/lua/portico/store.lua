-- Backend data shared between workers, applied per request without timers.
--
-- Writers (the status API, one request at a time from the controller) store each backend as JSON under
-- "b:<id>", bump the global version "v", and append the ids changed by that version to a change log "c:<v>".
-- Each worker keeps a decoded copy and its own version; on the next request it sees the version moved and
-- decodes only the backends listed in the change log entries it missed (a full re-read only when it fell
-- further behind than the log keeps, or right after start/reload).
local cjson = require("cjson.safe")
local dict = ngx.shared.portico_data

local LOG_KEEP = 4096

local _M = {}

local local_version = -1
local backends = {}        -- id -> decoded backend table (with balancer state attached by balancer.lua)
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

-- Called at the start of every proxied request: O(1) when nothing changed.
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

-- Writer side (status API). upsert: id -> backend table; remove: list of ids. Returns the new version.
function _M.apply(upsert, remove)
  local changed = {}
  for id, b in pairs(upsert or {}) do
    local ok, err = dict:set("b:" .. id, cjson.encode(b))
    if not ok then return nil, "shared dict full storing backend " .. id .. ": " .. tostring(err) end
    changed[#changed + 1] = id
  end
  for _, id in ipairs(remove or {}) do
    dict:delete("b:" .. id)
    changed[#changed + 1] = id
  end
  if #changed == 0 then return dict:get("v") or 0 end
  local v = (dict:get("v") or 0) + 1
  dict:set("c:" .. v, table.concat(changed, "\n"))
  dict:delete("c:" .. (v - LOG_KEEP - 1))
  dict:set("v", v)
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
