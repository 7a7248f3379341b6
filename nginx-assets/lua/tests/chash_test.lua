package.path = arg[1] .. "/?.lua;" .. package.path
local chash = require("portico.chash")
local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. (msg or "")) end
end
local function eps(n) local t = {} for i = 1, n do t[i] = { address = "10.0.0." .. i, port = 80 } end return t end

local r4 = chash.new(eps(4))
local r5 = chash.new(eps(5))
local moved, counts, K = 0, {}, 20000
for i = 1, K do
  local key = "/item/" .. i
  local a, b = r4:find(key), r5:find(key)
  counts[a.address] = (counts[a.address] or 0) + 1
  if a.address ~= b.address then moved = moved + 1 end
end
check("same key, same endpoint", r4:find("/x").address == r4:find("/x").address)
check("adding 1 endpoint to 4 moves about 1/5 of keys (<= 1/4)", moved / K <= 0.25, tostring(moved / K))
check("moved keys only go to the new endpoint", (function()
  for i = 1, 2000 do local key = "/item/" .. i; local a, b = r4:find(key), r5:find(key)
    if a.address ~= b.address and b.address ~= "10.0.0.5" then return false end end
  return true end)())
local minc, maxc = K, 0
for _, c in pairs(counts) do if c < minc then minc = c end; if c > maxc then maxc = c end end
check("balanced within 35%", maxc / minc < 1.35, minc .. ".." .. maxc)
check("skip walks to another endpoint", r4:find("/x", function(p) return p.address == r4:find("/x").address end).address ~= r4:find("/x").address)
check("empty ring", chash.new({}):find("k") == nil)
print(string.format("# moved %.3f of keys when going from 4 to 5 endpoints", moved / K))
if failures > 0 then os.exit(1) end
