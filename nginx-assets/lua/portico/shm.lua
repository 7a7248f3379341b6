-- Writes to the shared dictionaries. `dict:set` evicts the least recently used entries when the zone is full, so
-- a full certificate dict would silently drop other hosts' certificates; every write here uses safe_set/safe_add
-- (which fail instead of evicting), and each failure is logged and counted. The counters live in their own small
-- zone (portico_stats) so a full data zone cannot also lose the count of its failures; the controller reads them
-- from GET /portico/config.
local _M = {}

local function stats()
  return ngx.shared.portico_stats
end

function _M.count(name, n)
  local s = stats()
  if s then s:incr(name, n or 1, 0) end
end

function _M.get_count(name)
  local s = stats()
  return s and s:get(name) or 0
end

-- safe_set with accounting. `zone` names the dict in logs and counters ("data" or "certs"); `exptime`: seconds
-- the entry lives (nil: until removed).
function _M.set(dict, zone, key, value, exptime)
  local ok, err = dict:safe_set(key, value, exptime)
  if not ok then
    _M.count("fail:" .. zone)
    ngx.log(ngx.ERR, "portico: shared dict portico_", zone, " cannot store ", key, " (", type(value) == "string" and #value or 8,
      " bytes): ", err, "; raise its size with the lua-shared-dicts ConfigMap key")
  end
  return ok, err
end

-- safe_add with accounting: "exists" is an answer, not a failure.
function _M.add(dict, zone, key, value, exptime)
  local ok, err = dict:safe_add(key, value, exptime)
  if not ok and err ~= "exists" then
    _M.count("fail:" .. zone)
    ngx.log(ngx.ERR, "portico: shared dict portico_", zone, " cannot add ", key, ": ", err)
  end
  return ok, err
end

function _M.failures()
  -- metrics: series the per-request metrics module found no room for (its variable; none without the module).
  return { data = _M.get_count("fail:data"), certs = _M.get_count("fail:certs"),
    metrics = tonumber(ngx.var.portico_metrics_dropped) or 0 }
end

-- Each zone carries a random "epoch" written once per zone lifetime. nginx starts a zone empty when it is created
-- (first start, restart, or a reload that changed its size); a new epoch tells the controller to send everything.
local function random_id()
  local f = io.open("/dev/urandom", "rb")
  local raw = f and f:read(8)
  if f then f:close() end
  if not raw or #raw < 8 then return tostring(os.time()) .. "-" .. tostring(os.clock()) end
  return (raw:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

function _M.init_epochs()
  for _, zone in ipairs({ "data", "certs" }) do
    local d = ngx.shared["portico_" .. zone]
    if d then _M.add(d, zone, "epoch", random_id()) end
  end
end

function _M.epochs()
  local out = {}
  for _, zone in ipairs({ "data", "certs" }) do
    local d = ngx.shared["portico_" .. zone]
    out[zone] = d and d:get("epoch") or ""
  end
  return out
end

return _M
