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

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "rate-limit"
_M.order = 7

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

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, header_name, refusal_status = C.str, C.is_int, C.header_name, C.refusal_status

-- The rate-limit fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if not is_int(p.rate, 1, 1000000) then return "rate must be 1-1000000" end
  if p.periodSeconds ~= 1 and p.periodSeconds ~= 60 then return "periodSeconds must be 1 or 60" end
  if p.burst ~= nil and not is_int(p.burst, 0, 1000000) then return "burst must be 0-1000000" end
  if p.by ~= nil and p.by ~= "ip" and p.by ~= "consumer" and p.by ~= "header" then return "by must be ip, consumer or header" end
  if p.by == "header" and not header_name(p.header) then return "by=header needs a header name" end
  if p.header ~= nil and not header_name(p.header) then return "invalid header" end
  if not refusal_status(p.status) then return "status must be 400-599" end
  if not str(p.key, 253, C.PLUGIN_ID) then return "invalid key" end
  if p.exempt ~= nil then return ip_restriction.cidr_list(p.exempt, "exempt") end
end

return _M
