-- rate-limit: GCRA (a leaky bucket kept as one "theoretical arrival time" per key) in the shared dict
-- portico_limits, so every worker of this nginx counts together. Semantics are nginx limit_req's with nodelay:
-- a new client may send 1 + `burst` requests at once, then one every periodSeconds / rate seconds (`rate` per
-- period sustained); a request over the limit gets `status` (429) and Retry-After: the whole seconds (at least 1)
-- until one more request would be allowed. Limits are per node, not per cluster.
--
-- Key: "<plugin key>:i:<client address>", ":c:<namespace>/<consumer user name>" (by=consumer, once an auth plugin
-- identified one; else by address), or ":h:<header value>" (by=header; long values hashed; a request without the
-- header is counted by address). Entries expire once the bucket has drained; when the zone is full, `set` evicts
-- the least recently used counters (forgetting an idle client is the right loss here).
--
-- Race: the read and the write of a key are two operations, so requests arriving in different workers at the
-- same instant can read the same value and both pass: at most one extra request per other worker at any moment,
-- never a lasting overshoot (the next request sees the later value).
local crypto = require("portico.plugins.crypto")
local ip_restriction = require("portico.plugins.ip_restriction")
local util = require("portico.plugins.util")

local _M = {}

local ceil = math.ceil

local function ident(self, ctx)
  local by = self.by
  if by == "consumer" then
    local c = ctx.portico_consumer
    if c then
      -- Built once per consumer record (dropped with it when consumers change).
      local k = c.rate_key
      if not k then
        k = "c:" .. c.ns .. "/" .. c.username
        c.rate_key = k
      end
      return k
    end
  elseif by == "header" then
    local v = ngx.var[self.header_var]
    if v and v ~= "" then
      if #v > 64 then return "h#" .. crypto.sha256_hex(v) end
      return "h:" .. v
    end
  end
  return "i:" .. (ngx.var.remote_addr or "")
end

-- Takes one request from the bucket of `key`; returns nil when allowed, else the seconds to wait.
function _M.take(self, key)
  local dict = ngx.shared.portico_limits
  local now = ngx.now()
  local tat = dict:get(key)
  if not tat or tat < now then tat = now end
  local ahead = tat - now
  if ahead > self.tau + 1e-9 then
    local wait = ceil(ahead - self.tau - 1e-9)
    return wait < 1 and 1 or wait
  end
  local new = tat + self.interval
  local ok, err = dict:set(key, new, ceil(new - now) + 1)
  if not ok then
    util.log_every("rate-limit:set", ngx.ERR, "portico: rate-limit ", self.name, ": cannot store a counter: ", tostring(err))
  end
  return nil
end

local function access(self, ctx)
  if self.exempt and ip_restriction.allowed(self.exempt, ngx.var.remote_addr) then return false end
  local wait = _M.take(self, self.prefix .. ident(self, ctx))
  if not wait then return false end
  return util.deny(self.status, { ["Retry-After"] = tostring(wait) })
end

function _M.new(conf, id)
  local interval = conf.periodSeconds / conf.rate
  return {
    name = conf.name or "",
    prefix = (conf.key or id) .. ":",
    interval = interval,
    tau = (conf.burst or 0) * interval,
    by = conf.by or "ip",
    header_var = conf.header and util.header_var(conf.header) or nil,
    status = conf.status or 429,
    -- Clients never limited (ingress-nginx's limit-whitelist): an allow-list matcher over these CIDRs.
    exempt = (type(conf.exempt) == "table" and #conf.exempt > 0) and ip_restriction.new({ allow = conf.exempt }) or nil,
    access = access,
  }
end

return _M
