-- SNI certificate selection from shared memory (ssl_certificate_by_lua): exact host, then the one-label wildcard,
-- then the default certificate. PEMs are parsed once per worker and cached until the certificate data changes.
local ssl = require("ngx.ssl")
local cjson = require("cjson.safe")
local dict = ngx.shared.portico_certs

local _M = {}

local cache = {}
local cache_version = -1

local function load(name)
  local raw = dict:get("h:" .. name)
  if not raw then return false end
  local c = cjson.decode(raw)
  if not c then return false end
  local cert, err1 = ssl.parse_pem_cert(c.cert)
  local key, err2 = ssl.parse_pem_priv_key(c.key)
  if not cert or not key then
    ngx.log(ngx.ERR, "portico: cannot parse certificate for ", name, ": ", err1 or err2)
    return false
  end
  return { cert = cert, key = key }
end

local function lookup(name)
  local v = dict:get("v") or 0
  if v ~= cache_version then
    cache = {}
    cache_version = v
  end
  local hit = cache[name]
  if hit == nil then
    hit = load(name)
    cache[name] = hit
  end
  return hit
end

function _M.select()
  local name = ssl.server_name()
  local c
  if name then
    name = name:lower()
    c = lookup(name)
    if not c then
      local dot = name:find(".", 1, true)
      if dot then c = lookup("*" .. name:sub(dot)) end
    end
  end
  if not c then c = lookup("__default__") end
  if not c then return end -- the placeholder certificate from nginx.conf is served
  local ok, err = ssl.clear_certs()
  if not ok then ngx.log(ngx.ERR, "portico: clear_certs: ", err); return ngx.exit(ngx.ERROR) end
  ok, err = ssl.set_cert(c.cert)
  if ok then ok, err = ssl.set_priv_key(c.key) end
  if not ok then ngx.log(ngx.ERR, "portico: set cert: ", err); return ngx.exit(ngx.ERROR) end
end

-- Writer side. upsert: host -> {cert, key, source}; remove: hosts; default: {cert,key} | cjson.null | nil.
function _M.apply(upsert, remove, default)
  for host, c in pairs(upsert or {}) do
    local ok, err = dict:set("h:" .. host, cjson.encode({ cert = c.cert, key = c.key, source = c.source }))
    if not ok then return nil, "cannot store certificate for " .. host .. ": " .. tostring(err) end
  end
  for _, host in ipairs(remove or {}) do dict:delete("h:" .. host) end
  if default == cjson.null then
    dict:delete("h:__default__")
  elseif type(default) == "table" then
    dict:set("h:__default__", cjson.encode({ cert = default.cert, key = default.key, source = default.source }))
  end
  local v = (dict:get("v") or 0) + 1
  dict:set("v", v)
  return v
end

function _M.hosts()
  local out = {}
  for _, k in ipairs(dict:get_keys(0)) do
    if k:sub(1, 2) == "h:" then
      local c = cjson.decode(dict:get(k))
      out[k:sub(3)] = c and c.source or true
    end
  end
  return out
end

return _M
