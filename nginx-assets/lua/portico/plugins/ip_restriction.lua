-- ip-restriction: who may enter, by client address ($remote_addr, which the realip module has already replaced
-- by the real client when a trusted proxy forwarded the request). A client in `deny` is refused; with an `allow`
-- list only clients in it pass (deny wins over allow). IPv4 and IPv6 CIDRs; a bare address is /32 or /128; an
-- IPv4-mapped IPv6 client (::ffff:a.b.c.d) is matched as the IPv4 address. The lists are compiled once per
-- instance; a client address is parsed once per request.
local bit = require("bit")
local util = require("portico.plugins.util")
local peers = require("portico.peers")
local band, rshift, lshift = bit.band, bit.rshift, bit.lshift

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "ip-restriction"
_M.order = 1
-- May be flagged satisfyAny (ingress-nginx's `satisfy any`, plugins.lua).
_M.satisfy_any = true

-- IP literals are parsed by peers.lua (the same parser that vets endpoint addresses).
local function ipv4(s)
  local a, b, c, d = peers.ipv4_octets(s)
  if not a then return nil end
  return { a * 256 + b, c * 256 + d } -- two 16-bit halves
end
local ipv6 = peers.ipv6_groups

-- An address as family (4 or 6), groups of 16 bits (2 or 8); IPv4-mapped IPv6 becomes IPv4 (third value true).
local function address(s)
  local g = ipv4(s)
  if g then return 4, g end
  g = ipv6(s:match("^%[(.*)%]$") or s)
  if not g then return nil end
  if g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0 and g[6] == 0xffff then
    return 4, { g[7], g[8] }, true
  end
  return 6, g
end

-- "10.0.0.0/8", "2001:db8::/32", "192.0.2.7" -> { family, groups, bits } (host bits cleared), or nil, why.
function _M.parse_cidr(s)
  if type(s) ~= "string" or #s > 64 then return nil, "not a CIDR" end
  local addr, len = s:match("^([^/]+)/(%d%d?%d?)$")
  if not addr then addr = s end
  local fam, g, mapped = address(addr)
  if not fam then return nil, "not an IP address" end
  local max = (fam == 4 and not mapped) and 32 or 128
  local bits = len and tonumber(len) or max
  if bits > max or (len and len:sub(1, 1) == "0" and #len > 1) then return nil, "invalid prefix length" end
  if mapped then
    -- ::ffff:a.b.c.d/n is the IPv4 network a.b.c.d/(n - 96); shorter prefixes would cover non-IPv4 addresses.
    if bits < 96 then return nil, "an IPv4-mapped prefix must be at least /96" end
    bits = bits - 96
  end
  local masked = {}
  for i = 1, #g do
    local keep = bits - (i - 1) * 16
    if keep >= 16 then masked[i] = g[i]
    elseif keep <= 0 then masked[i] = 0
    else masked[i] = band(g[i], lshift(0xffff, 16 - keep)) end
  end
  return { family = fam, groups = masked, bits = bits }
end

local function contains(net, fam, g)
  if net.family ~= fam then return false end
  local bits = net.bits
  local ng = net.groups
  for i = 1, #g do
    local keep = bits - (i - 1) * 16
    if keep <= 0 then return true end
    if keep >= 16 then
      if g[i] ~= ng[i] then return false end
    elseif rshift(g[i], 16 - keep) ~= rshift(ng[i], 16 - keep) then
      return false
    end
  end
  return true
end
_M.address = address
_M.contains = contains

local function compile(list)
  local out = {}
  for _, s in ipairs(list or {}) do
    local net = _M.parse_cidr(s)
    if not net then error("invalid CIDR " .. tostring(s)) end
    out[#out + 1] = net
  end
  return out
end

local function any(nets, fam, g)
  for i = 1, #nets do
    if contains(nets[i], fam, g) then return true end
  end
  return false
end

-- True when the client may enter.
function _M.allowed(self, addr)
  local fam, g = address(addr or "")
  if not fam then
    -- Not an IP (a unix-socket client): only an instance without an allow list lets it through.
    return #self.allow == 0
  end
  if any(self.deny, fam, g) then return false end
  if #self.allow > 0 then return any(self.allow, fam, g) end
  return true
end

local function access(self)
  if _M.allowed(self, ngx.var.remote_addr) then return false end
  return util.deny(self.status)
end

function _M.new(conf)
  return {
    allow = compile(conf.allow),
    deny = compile(conf.deny),
    status = conf.status or 403,
    access = access,
  }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local cjson = require("cjson.safe")
local refusal_status = C.refusal_status

-- A list of CIDRs (what: its field, for the message; also rate-limit's and conn-limit's exempt): nil when valid.
function _M.cidr_list(list, what)
  if not C.is_array(list) or #list > 4096 then return what .. " must be an array" end
  for _, c in ipairs(list) do
    local ok, why = _M.parse_cidr(c)
    if not ok then return what .. ": " .. cjson.encode(tostring(c):sub(1, 80)) .. " " .. why end
  end
end

-- The ip-restriction fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  for _, what in ipairs({ "allow", "deny" }) do
    local list = p[what]
    if list ~= nil then
      local err = _M.cidr_list(list, what)
      if err then return err end
    end
  end
  if not refusal_status(p.status) then return "status must be 400-599" end
end

return _M
