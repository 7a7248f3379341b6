-- Request-time routing: the access phase syncs worker data and answers 503 when a backend has no endpoints;
-- the balancer phase picks a peer with the backend's algorithm and arranges retries on another peer.
local ngx_balancer = require("ngx.balancer")
local store = require("portico.store")
local rr = require("portico.rr")
local chash = require("portico.chash")
local ewma = require("portico.ewma")

local _M = {}

-- Per-worker balancer state per backend, rebuilt when the backend's data changes.
local pickers = {}

-- Algorithms by name: new(backend) -> object with :next(skip) and :size().
local function hashed(b)
  local ring = chash.new(b.endpoints or {})
  local var = (b.hashBy or "$request_uri"):sub(2)
  return {
    size = function() return ring:size() end,
    next = function(_, skip) return ring:find(ngx.var[var], skip) end,
  }
end

local seeded = false

local function sticky(b)
  local ring = chash.new(b.endpoints or {})
  local robin = rr.new(b.endpoints or {})
  local byid = {}
  for _, e in ipairs(b.endpoints or {}) do byid[string.format("%08x", chash.hash(e.address .. ":" .. e.port))] = e end
  local c = b.cookie or {}
  local name = c.name or "INGRESSCOOKIE"
  local suffix = "; Path=/; HttpOnly" .. (c.maxAgeSeconds and ("; Max-Age=" .. c.maxAgeSeconds) or "")
  return {
    size = function() return robin:size() end,
    next = function(_, skip) return robin:next(skip) end,
    -- Access phase: choose the peer from the cookie (or set a new cookie) and remember it for the balancer.
    stick = function()
      if not seeded then
        math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
        seeded = true
      end
      local v = ngx.var["cookie_" .. name]
      local peer
      if c.mode == "persistent" then
        peer = v and byid[v]
        if not peer then
          peer = robin:next()
          if peer then ngx.var.portico_set_cookie = name .. "=" .. string.format("%08x", chash.hash(peer.address .. ":" .. peer.port)) .. suffix end
        end
      else
        if not v or not v:match("^[0-9a-f]+$") then
          v = string.format("%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
          ngx.var.portico_set_cookie = name .. "=" .. v .. suffix
        end
        peer = ring:find(v)
      end
      ngx.ctx.portico_sticky = peer
    end,
  }
end

local algorithms = {
  round_robin = function(b) return rr.new(b.endpoints or {}) end,
  ewma = function(b) return ewma.new(b.endpoints or {}, 10) end,
  chash = hashed,
  cookie = sticky,
}

store.on_change(function(id, b)
  if not b then pickers[id] = nil; return end
  local make = algorithms[b.balance or "round_robin"] or algorithms.round_robin
  pickers[id] = make(b)
end)

-- Canary decision (ingress-nginx precedence: header, then cookie, then weight). Returns true for the canary.
local function use_canary(c)
  if c.header then
    local hv = ngx.var["http_" .. c.header:lower():gsub("-", "_")]
    if hv then
      if c.headerValue then
        if hv == c.headerValue then return true end
      elseif c.headerPattern then
        if ngx.re.find(hv, c.headerPattern, "jo") then return true end
      elseif hv == "always" then
        return true
      elseif hv == "never" then
        return false
      end
    end
  end
  if c.cookie then
    local cv = ngx.var["cookie_" .. c.cookie]
    if cv == "always" then return true elseif cv == "never" then return false end
  end
  local w = c.weight or 0
  if w <= 0 then return false end
  return math.random(1, c.weightTotal or 100) <= w
end

function _M.access()
  local id = ngx.var.portico_backend
  if id == nil or id == "" then return end
  store.sync()
  local main = store.get(id)
  local c = main and main.canary
  if c and pickers[c.backendId] and use_canary(c) then
    id = c.backendId
    ngx.var.portico_backend = id
  end
  local p = pickers[id]
  if not p or p:size() == 0 then
    local b = store.get(id)
    ngx.status = 503
    ngx.header["Content-Type"] = "text/plain"
    ngx.header["X-Portico-Reason"] = "no-endpoints"
    ngx.say("503 Service Unavailable: no ready endpoints for this path",
      b and b.unavailableReason and (" (" .. b.unavailableReason .. ")") or "")
    return ngx.exit(503)
  end
  if p.stick then p.stick() end
end

-- Log phase: feed response times to latency-aware pickers (a no-op for the others).
function _M.log()
  local id = ngx.var.portico_backend
  if id == nil or id == "" then return end
  local p = pickers[id]
  if not p or not p.observe then return end
  local addrs, times = ngx.var.upstream_addr, ngx.var.upstream_response_time
  if not addrs or not times then return end
  local addr = addrs:match("([^,%s]+)%s*$")
  local rt = tonumber(times:match("([^,%s]+)%s*$"))
  if addr and rt then p:observe(addr, rt, ngx.now()) end
end

local function tried_key(p) return p.address .. ":" .. p.port end

-- First attempt: no per-request tables or strings. Retries (after a connect error) skip the peers tried so far.
function _M.balance()
  local p = pickers[ngx.var.portico_backend]
  if not p then return ngx.exit(503) end
  local peer
  if not ngx_balancer.get_last_failure() then
    -- First attempt: remember the peer in ngx.ctx only when a retry is possible at all.
    peer = p.stick and ngx.ctx.portico_sticky or p:next()
    if not peer then return ngx.exit(503) end
    if p:size() > 1 then ngx.ctx.portico_peer = peer end
    local extra = p:size() - 1
    if extra > 2 then extra = 2 end
    if extra > 0 then ngx_balancer.set_more_tries(extra) end
  else
    local ctx = ngx.ctx
    local tried = ctx.portico_tried
    if not tried then
      tried = { [tried_key(ctx.portico_peer)] = true }
      ctx.portico_tried = tried
    end
    peer = p:next(function(x) return tried[tried_key(x)] end) or p:next()
    if not peer then return ngx.exit(503) end
    tried[tried_key(peer)] = true
  end
  local ok, err = ngx_balancer.set_current_peer(peer.address, peer.port)
  if not ok then
    ngx.log(ngx.ERR, "portico: set_current_peer ", peer.address, ":", peer.port, " failed: ", err)
    return ngx.exit(502)
  end
end

return _M
