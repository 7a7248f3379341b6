-- Worst-case basic-auth verify time at Portico's cost bounds, on this machine: one crypt(3) through the same
-- crypto.lua (libxcrypt) the nginx worker runs, best of 5 (the worker pays at least this much per check).
--   luajit e2e/bench/hash-cost.lua nginx-assets/lua
package.path = arg[1] .. "/?.lua;" .. package.path
_G.ngx = {}
local crypto = require("portico.plugins.crypto")
local ffi = require("ffi")
ffi.cdef [[ typedef struct { long tv_sec; long tv_nsec; } portico_ts; int clock_gettime(int, portico_ts *); ]]
local ts = ffi.new("portico_ts")
local function now() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9 end
local function ms(setting)
  local best = math.huge
  for _ = 1, 5 do
    local t0 = now()
    local out = crypto.bcrypt("correct horse battery staple", setting)
    local d = now() - t0
    if not out then return nil end
    if d < best then best = d end
  end
  return best * 1000
end
local R = tostring(crypto.MAX_SHA_CRYPT_ROUNDS)
local C = string.format("%02d", crypto.MAX_BCRYPT_COST)
for _, c in ipairs({
  { "bcrypt cost 5 (htpasswd -B)", "$2b$05$abcdefghijklmnopqrstuu" },
  { "bcrypt cost 10", "$2b$10$abcdefghijklmnopqrstuu" },
  { "bcrypt cost " .. C .. " (the bound)", "$2b$" .. C .. "$abcdefghijklmnopqrstuu" },
  { "sha512-crypt 5000 rounds (default)", "$6$saltsaltsaltsalt" },
  { "sha256-crypt " .. R .. " rounds (the bound)", "$5$rounds=" .. R .. "$saltsaltsaltsalt" },
  { "sha512-crypt " .. R .. " rounds (the bound)", "$6$rounds=" .. R .. "$saltsaltsaltsalt" },
  { "md5-crypt $1$ (fixed)", "$1$saltsalt" },
  { "DES (fixed)", "abJnggxhB/yWI" },
}) do
  local t = ms(c[2])
  print(string.format("%-40s %s", c[1], t and string.format("%8.1f ms", t) or "refused"))
end
print(string.format("%-40s %s", "bcrypt cost 13 (over the bound)", ms("$2b$13$abcdefghijklmnopqrstuu") and "COMPUTED" or "refused"))
