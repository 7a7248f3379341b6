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
--
-- ssl-ciphers: a certificate entry may carry the cipher list of the hosts that point at it (the controller makes the
-- same certificate with another list another entry); select sets it on the connection (tlsctx.set_ciphers) for a
-- host's own certificate, and the client hello ties resumption to it (tlsctx.lua).
--
-- Client certificates (ingress-nginx's auth-tls-*, DataPlane.clientAuth) live here too: "ca:<id>" → {ca, depth,
-- source} once per CA configuration, "a:<host>" → id, or "-" (ask for nothing: a host whose own routes shadow a
-- wildcard or "_" that asks). A server name is looked up as the router looks up a host: exact, the one-label
-- wildcard, then "_". For a name that asks, the handshake requests a certificate with that CA
-- (ngx.ssl.verify_client: never refused in the handshake, $ssl_client_verify tells the outcome) and the TLS
-- session records which CA configuration it was (tlsctx.lua), which also keeps sessions from being resumed under
-- another one. The per-request check is plugins/client_cert.lua.
-- Gateway API ports (spec.tls.frontend): "a:<port>/_" is the entry of every handshake on that pod port, whatever the
-- server name, and a Gateway port asks with no other entry. A `strict` CA (AllowValidOnly) makes the handshake
-- refuse a client without a certificate (tlsctx.require_certificate), and router.lua answers nothing on a
-- connection whose certificate did not verify; otherwise (AllowInsecureFallback) it asks and lets every client in.
local ssl = require("ngx.ssl")
local cjson = require("cjson.safe")
local lrucache = require("resty.lrucache")
local shm = require("portico.shm")
local tlsctx = require("portico.tlsctx")
local clienthello = require("ngx.ssl.clienthello")
local dict = ngx.shared.portico_certs

local _M = {}

_M.NAME_CACHE_SIZE = 4096
local DEFAULT = "__default__"

local names = assert(lrucache.new(_M.NAME_CACHE_SIZE))
local parsed = {}
local client_names = assert(lrucache.new(_M.NAME_CACHE_SIZE))
local client_parsed = {} -- CA id -> { chain, depth } or false (cannot be parsed; logged)
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
  return { cert = cert, key = key, id = id, ocsp = type(c.ocsp) == "table", ciphers = type(c.ciphers) == "string" and c.ciphers or nil }
end

-- The id shared memory maps `name` to under `prefix` (false: none), remembered in the worker's name cache `cache`.
local function cached_id(cache, prefix, name)
  local id = cache:get(name)
  if id == nil then
    id = dict:get(prefix .. name) or false
    cache:set(name, id)
  end
  return id
end

local function lookup(name)
  local id = cached_id(names, "h:", name)
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
    client_names:flush_all()
    client_parsed = {}
    cache_version = v
  end
end

local function client_lookup(name)
  return cached_id(client_names, "a:", name)
end

local function parse_ca(id)
  local raw = dict:get("ca:" .. id)
  local c = raw and cjson.decode(raw)
  if type(c) ~= "table" or type(c.ca) ~= "string" then return false end
  local chain, err = ssl.parse_pem_cert(c.ca)
  if not chain then
    ngx.log(ngx.ERR, "portico: cannot parse the client-certificate CA ", id, " (", tostring(c.source), "): ", err)
    return false
  end
  return { chain = chain, depth = tonumber(c.depth) or 1, strict = c.strict == true }
end

-- The pod ports of Gateways (init.lua): a handshake there asks with its port's entry only.
_M.gateway_ports = {}

-- The client-certificate CA configuration a server name asks with (on a Gateway port: the port's, whatever the
-- name): its id and the parsed CA (false when the CA cannot be used), or nil when it asks for no certificate.
-- Exposed for tests.
function _M.client_auth(name, port)
  refresh()
  local id
  if port and _M.gateway_ports[port] then
    id = client_lookup(port .. "/_")
  elseif type(name) == "string" and name ~= "" then
    name = name:lower()
    id = client_lookup(name)
    if not id then
      local dot = name:find(".", 1, true)
      if dot then id = client_lookup("*" .. name:sub(dot)) end
      if not id then id = client_lookup("_") end
    end
  end
  if not id or id == "-" then return nil end
  local e = client_parsed[id]
  if e == nil then
    e = parse_ca(id)
    client_parsed[id] = e
  end
  return id, e or nil
end

-- The local port of the connection being handshaken, when it may be a Gateway port (nil otherwise).
local function gateway_port()
  if not next(_M.gateway_ports) then return nil end
  local port = ssl.server_port()
  return port and _M.gateway_ports[port] and port or nil
end

-- ssl_client_hello_by_lua: a session may be resumed on this connection only if it was made under the CA
-- configuration the server name asks with now (tlsctx.lua).
function _M.hello()
  local name = clienthello.get_client_hello_server_name()
  local id = _M.client_auth(name, gateway_port())
  if not id then
    -- A host with a cipher list of its own (ssl-ciphers): a TLS 1.2 session keeps the cipher it was made with, so
    -- only one made for this certificate and list may be resumed here (and sessions made here nowhere else).
    local c, own = _M.find(name)
    if own and c and c.ciphers then
      local ok, err = tlsctx.set_connection(c.id:sub(1, 30), "pk")
      if not ok then
        ngx.log(ngx.ERR, "portico: ssl-ciphers for ", tostring(name), ": ", err)
        return ngx.exit(ngx.ERROR)
      end
    end
    return
  end
  local ok, err = tlsctx.set_connection(id)
  if not ok then
    -- Without it a session of another CA could be resumed here: refuse the handshake.
    ngx.log(ngx.ERR, "portico: client certificates for ", tostring(name), ": ", err)
    return ngx.exit(ngx.ERROR)
  end
end

-- Asks for a client certificate when the server name (or the Gateway port) wants one, after the server certificate
-- is chosen.
local function ask_client_certificate(name, port)
  local id, ca = _M.client_auth(name, port)
  if not id then return end
  if not ca then
    -- Logged when parsed. On a Gateway port that requires a certificate the handshake is refused (fail closed); an
    -- Ingress host's paths that need one refuse every request.
    if port then
      local raw = dict:get("ca:" .. id)
      local c = raw and cjson.decode(raw)
      if type(c) ~= "table" or c.strict ~= false then
        ngx.log(ngx.ERR, "portico: the client-certificate CA of Gateway port ", port, " cannot be used: handshake refused")
        return ngx.exit(ngx.ERROR)
      end
    end
    return
  end
  local ok, err = ssl.verify_client(ca.chain, ca.depth)
  if ok and ca.strict then ok, err = tlsctx.require_certificate() end
  if ok then ok, err = tlsctx.set_session(id) end
  if not ok then
    ngx.log(ngx.ERR, "portico: asking for a client certificate for ", tostring(name), ": ", err)
    return ngx.exit(ngx.ERROR)
  end
end

-- For tests: how many SNI names this worker remembers.
function _M.cached_names()
  return names:count()
end

-- The certificate material for a server name (nil: none, the default applies), and whether it is the name's own
-- (exact or wildcard) rather than the default. Exposed for tests.
-- port: the local port of a connection to a Gateway port. Its listeners' certificates are keyed by it
-- ("<port>/<host>", "<port>/*.<domain>" — a wildcard covers one label or more, the most specific first — and
-- "<port>/_" for a listener without a hostname) and looked up before anything else; they are never served on
-- another port.
local function find_on_port(name, port)
  local prefix = port .. "/"
  if name and name ~= DEFAULT then
    local c = lookup(prefix .. name)
    if c then return c end
    local dot = name:find(".", 1, true)
    while dot do
      c = lookup(prefix .. "*" .. name:sub(dot))
      if c then return c end
      dot = name:find(".", dot + 1, true)
    end
  end
  return lookup(prefix .. "_")
end

function _M.find(name, port)
  refresh()
  local c
  if name then name = name:lower() end
  if port then
    c = find_on_port(name, port)
    if c then return c, true end
  end
  -- A client naming the default's own key ("__default__") gets the default, never as a host of its own.
  if name and name ~= DEFAULT then
    c = lookup(name)
    if not c then
      local dot = name:find(".", 1, true)
      if dot then c = lookup("*" .. name:sub(dot)) end
    end
  end
  if c then return c, true end
  return lookup(DEFAULT), false
end

-- ssl-reject-handshake: whether a server name is a host Portico serves — one with a certificate of its own (found
-- by find) or with routes, exact or under a one-label wildcard, as ingress-nginx has a server block for each such
-- host. "_" (rules without a host) and a missing server name are not: ingress-nginx's catch-all server is the one
-- that rejects. Routes are only tested for presence in shared memory (nothing decoded); nothing is cached, so
-- client-chosen names cost worker memory nothing.
function _M.known_host(name)
  if type(name) ~= "string" or name == "" then return false end
  name = name:lower()
  if name == "_" then return false end
  local routes = ngx.shared.portico_data
  if routes:ttl("r:" .. name) ~= nil then return true end
  local dot = name:find(".", 1, true)
  return dot ~= nil and routes:ttl("r:*" .. name:sub(dot)) ~= nil
end

-- reject (ssl-reject-handshake): a server name that is no host Portico serves fails the handshake instead of being
-- answered with the default (or placeholder) certificate, so the certificate cannot be fingerprinted.
-- staple (enable-ocsp): the certificate's OCSP answer is stapled when one is kept (ocsp.lua).
function _M.select(reject, staple)
  local name = ssl.server_name()
  -- Gateway ports have certificates of their own (only asked for when Gateway ports exist).
  local port = _M.port_defaults and ssl.server_port() or nil
  local c, own = _M.find(name, port)
  if reject and not own and not _M.known_host(name) then
    return ngx.exit(ngx.ERROR)
  end
  if c then -- else the placeholder certificate from nginx.conf is served
    local ok, err = ssl.clear_certs()
    if not ok then ngx.log(ngx.ERR, "portico: clear_certs: ", err); return ngx.exit(ngx.ERROR) end
    ok, err = ssl.set_cert(c.cert)
    if ok then ok, err = ssl.set_priv_key(c.key) end
    if not ok then ngx.log(ngx.ERR, "portico: set cert: ", err); return ngx.exit(ngx.ERROR) end
    if own and c.ciphers then
      -- ssl-ciphers: this host's list for the TLS ≤ 1.2 cipher OpenSSL chooses next. Not applied, the handshake
      -- fails rather than go on with the ConfigMap's list (a host asking for fewer ciphers never gets more).
      ok, err = tlsctx.set_ciphers(c.ciphers)
      if not ok then
        ngx.log(ngx.ERR, "portico: ssl-ciphers for ", tostring(name), ": ", err, "; handshake refused")
        return ngx.exit(ngx.ERROR)
      end
    end
    if staple then require("portico.ocsp").staple(c.id, c.ocsp) end
  end
  return ask_client_certificate(name, port and _M.gateway_ports[port] and port or nil)
end

-- Removes certificates (and client-certificate CAs) no host refers to any more.
local function sweep()
  local used, stored = {}, {}
  local keys = dict:get_keys(0)
  for i = 1, #keys do
    local k = keys[i]
    local p = k:sub(1, 2)
    if p == "h:" then
      local id = dict:get(k)
      if id then used["c:" .. id] = true end
    elseif p == "a:" then
      local id = dict:get(k)
      if id then used["ca:" .. id] = true end
    elseif p == "c:" or k:sub(1, 3) == "ca:" then
      stored[#stored + 1] = k
    end
  end
  for i = 1, #stored do
    if not used[stored[i]] then dict:delete(stored[i]) end
  end
end

-- Writer side (input already validated by api.lua).
--   certificates: id -> {cert, key, source, ocsp?}   content, stored once per id (ocsp: the vetted responder)
--   hosts:        host -> id
--   remove:       hosts
--   default:      id | cjson.null (none) | nil (unchanged)
--   client:       { cas = {id -> {ca, depth, source, strict?}}, hosts = {host -> id | "-"}, remove = {host...} } | nil
-- Returns the new version; when something could not be stored (the zone is full: safe_set never evicts another
-- tenant's certificate), also an error and what is missing: { hosts = {host...}, clientHosts = {host...} } — those
-- hosts keep what they had (their previous certificate, else the default). Everything else is applied and published
-- either way. nil and an error only when the new version cannot be published.
function _M.apply(certificates, hosts, remove, default, client)
  local failed
  local missed = { hosts = {}, clientHosts = {} }
  for id, c in pairs(certificates or {}) do
    if not dict:get("c:" .. id) then
      local ok, err = shm.set(dict, "certs", "c:" .. id, cjson.encode({ cert = c.cert, key = c.key, source = c.source, ocsp = c.ocsp, ciphers = c.ciphers }))
      if not ok then failed = failed or ("shared dict portico_certs is full storing certificate " .. tostring(c.source) .. ": " .. tostring(err)) end
    end
  end
  local changed = false
  local function point(host, id)
    if not dict:get("c:" .. id) then
      failed = failed or ("certificate " .. id .. " for " .. host .. " is not stored")
      missed.hosts[#missed.hosts + 1] = host
      return
    end
    if dict:get("h:" .. host) == id then return end
    local ok, err = shm.set(dict, "certs", "h:" .. host, id)
    if ok then changed = true
    else
      failed = failed or ("shared dict portico_certs is full storing host " .. host .. ": " .. tostring(err))
      missed.hosts[#missed.hosts + 1] = host
    end
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
  if client then
    for id, c in pairs(client.cas or {}) do
      if not dict:get("ca:" .. id) then
        local ok, err = shm.set(dict, "certs", "ca:" .. id, cjson.encode({ ca = c.ca, depth = c.depth, source = c.source, strict = c.strict == true }))
        if not ok then failed = failed or ("shared dict portico_certs is full storing client CA " .. tostring(c.source) .. ": " .. tostring(err)) end
      end
    end
    for host, id in pairs(client.hosts or {}) do
      if id ~= "-" and not dict:get("ca:" .. id) then
        failed = failed or ("client CA " .. id .. " for " .. host .. " is not stored")
        missed.clientHosts[#missed.clientHosts + 1] = host
        -- A host that asked before must not keep asking with a CA it no longer has: it asks for nothing now, and
        -- its paths that need a certificate refuse every request (fail closed).
        if dict:get("a:" .. host) then dict:delete("a:" .. host); changed = true end
      elseif dict:get("a:" .. host) ~= id then
        local ok, err = shm.set(dict, "certs", "a:" .. host, id)
        if ok then changed = true
        else
          failed = failed or ("shared dict portico_certs is full storing client CA of host " .. host .. ": " .. tostring(err))
          missed.clientHosts[#missed.clientHosts + 1] = host
        end
      end
    end
    for _, host in ipairs(client.remove or {}) do
      if dict:get("a:" .. host) then dict:delete("a:" .. host); changed = true end
    end
  end
  local v = dict:get("v") or 0
  if changed then
    v = v + 1
    local ok, err = shm.set(dict, "certs", "v", v)
    if not ok then return nil, "cannot publish certificate version: " .. tostring(err) end
  end
  -- After the version moved, so a worker never holds a host → id mapping whose certificate is already gone.
  sweep()
  if failed then return v, failed, missed end
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
