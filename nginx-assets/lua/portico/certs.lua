-- SNI certificate selection from shared memory (ssl_certificate_by_lua): exact host, then the one-label wildcard,
-- then the default certificate.
--
-- Shared memory holds each distinct certificate once, under its id (a fingerprint of its content computed by the
-- controller): "c:<id>" → {cert, key, source}; hosts only point at it: "h:<host>" → id ("h:__default__" for the
-- default). A certificate no host points at any more is swept. "v" is bumped on every change.
--
-- Per worker: parsed certificates by id (bounded by the distinct certificates configured), and an LRU of SNI name
-- → id with a fixed number of entries, which also remembers misses — unauthenticated clients choose the SNI, so
-- an unbounded cache would let them grow worker memory at will.
local ssl = require("ngx.ssl")
local cjson = require("cjson.safe")
local lrucache = require("resty.lrucache")
local shm = require("portico.shm")
local dict = ngx.shared.portico_certs

local _M = {}

_M.NAME_CACHE_SIZE = 4096
local DEFAULT = "__default__"

local names = assert(lrucache.new(_M.NAME_CACHE_SIZE))
local parsed = {}
local cache_version = -1

local function parse(id)
  local raw = dict:get("c:" .. id)
  local c = raw and cjson.decode(raw)
  if type(c) ~= "table" then return false end
  local cert, err1 = ssl.parse_pem_cert(c.cert)
  local key, err2 = ssl.parse_pem_priv_key(c.key)
  if not cert or not key then
    ngx.log(ngx.ERR, "portico: cannot parse certificate ", id, " (", tostring(c.source), "): ", err1 or err2)
    return false
  end
  return { cert = cert, key = key }
end

local function lookup(name)
  local id = names:get(name)
  if id == nil then
    id = dict:get("h:" .. name) or false
    names:set(name, id)
  end
  if not id then return nil end
  local m = parsed[id]
  if m == nil then
    m = parse(id)
    parsed[id] = m
  end
  return m or nil
end

local function refresh()
  local v = dict:get("v") or 0
  if v ~= cache_version then
    names:flush_all()
    parsed = {}
    cache_version = v
  end
end

-- For tests: how many SNI names this worker remembers.
function _M.cached_names()
  return names:count()
end

-- The certificate material for a server name (nil: none, the default applies). Exposed for tests.
function _M.find(name)
  refresh()
  local c
  if name then
    name = name:lower()
    c = lookup(name)
    if not c then
      local dot = name:find(".", 1, true)
      if dot then c = lookup("*" .. name:sub(dot)) end
    end
  end
  return c or lookup(DEFAULT)
end

function _M.select()
  local c = _M.find(ssl.server_name())
  if not c then return end -- the placeholder certificate from nginx.conf is served
  local ok, err = ssl.clear_certs()
  if not ok then ngx.log(ngx.ERR, "portico: clear_certs: ", err); return ngx.exit(ngx.ERROR) end
  ok, err = ssl.set_cert(c.cert)
  if ok then ok, err = ssl.set_priv_key(c.key) end
  if not ok then ngx.log(ngx.ERR, "portico: set cert: ", err); return ngx.exit(ngx.ERROR) end
end

-- Removes certificates no host refers to any more.
local function sweep()
  local used, stored = {}, {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    local p = k:sub(1, 2)
    if p == "h:" then
      local id = dict:get(k)
      if id then used[id] = true end
    elseif p == "c:" then
      stored[#stored + 1] = k:sub(3)
    end
  end
  for i = 1, #stored do
    if not used[stored[i]] then dict:delete("c:" .. stored[i]) end
  end
end

-- Writer side (input already validated by api.lua).
--   certificates: id -> {cert, key, source}   content, stored once per id
--   hosts:        host -> id
--   remove:       hosts
--   default:      id | cjson.null (none) | nil (unchanged)
-- Returns the new version, or nil and an error; what could be stored is applied and published either way.
function _M.apply(certificates, hosts, remove, default)
  local failed
  for id, c in pairs(certificates or {}) do
    if not dict:get("c:" .. id) then
      local ok, err = shm.set(dict, "certs", "c:" .. id, cjson.encode({ cert = c.cert, key = c.key, source = c.source }))
      if not ok then failed = failed or ("shared dict portico_certs is full storing certificate " .. tostring(c.source) .. ": " .. tostring(err)) end
    end
  end
  local changed = false
  local function point(host, id)
    if not dict:get("c:" .. id) then
      failed = failed or ("certificate " .. id .. " for " .. host .. " is not stored")
      return
    end
    if dict:get("h:" .. host) == id then return end
    local ok, err = shm.set(dict, "certs", "h:" .. host, id)
    if ok then changed = true
    else failed = failed or ("shared dict portico_certs is full storing host " .. host .. ": " .. tostring(err)) end
  end
  for host, id in pairs(hosts or {}) do point(host, id) end
  for _, host in ipairs(remove or {}) do
    if dict:get("h:" .. host) then dict:delete("h:" .. host); changed = true end
  end
  if default == cjson.null then
    if dict:get("h:" .. DEFAULT) then dict:delete("h:" .. DEFAULT); changed = true end
  elseif type(default) == "string" then
    point(DEFAULT, default)
  end
  local v = dict:get("v") or 0
  if changed then
    v = v + 1
    local ok, err = shm.set(dict, "certs", "v", v)
    if not ok then return nil, "cannot publish certificate version: " .. tostring(err) end
  end
  -- After the version moved, so a worker never holds a host → id mapping whose certificate is already gone.
  sweep()
  if failed then return nil, failed end
  return v
end

-- host -> source of its certificate (for the controller and tests).
function _M.hosts()
  local out = {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    if k:sub(1, 2) == "h:" then
      local id = dict:get(k)
      local raw = id and dict:get("c:" .. id)
      local c = raw and cjson.decode(raw)
      out[k:sub(3)] = c and c.source or true
    end
  end
  return out
end

-- How many certificates are stored (for tests: one per distinct certificate, not per host).
function _M.stored()
  local n = 0
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    if keys[i]:sub(1, 2) == "c:" then n = n + 1 end
  end
  return n
end

return _M
