-- Request-time routing: the access phase syncs worker data and answers 503 when a backend has no endpoints;
-- the balancer phase picks a peer with the backend's algorithm and arranges retries on another peer.
local ngx_balancer = require("ngx.balancer")
local store = require("portico.store")
local rr = require("portico.rr")

local _M = {}

-- Per-worker balancer state per backend, rebuilt when the backend's data changes.
local pickers = {}

-- Algorithms by name. round_robin now; ewma, chash and cookie plug in here with the same interface
-- (new(backend) -> object with :next(skip)).
local algorithms = {
  round_robin = function(b) return rr.new(b.endpoints or {}) end,
}

store.on_change(function(id, b)
  if not b then pickers[id] = nil; return end
  local make = algorithms[b.balance or "round_robin"] or algorithms.round_robin
  pickers[id] = make(b)
end)

function _M.access()
  local id = ngx.var.portico_backend
  if id == nil or id == "" then return end
  store.sync()
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
end

local function tried_key(p) return p.address .. ":" .. p.port end

-- First attempt: no per-request tables or strings. Retries (after a connect error) skip the peers tried so far.
function _M.balance()
  local p = pickers[ngx.var.portico_backend]
  if not p then return ngx.exit(503) end
  local peer
  if not ngx_balancer.get_last_failure() then
    -- First attempt: remember the peer in ngx.ctx only when a retry is possible at all.
    peer = p:next()
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
