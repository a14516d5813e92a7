-- Issue 22's Lua workload: table building, table.sort with a Lua comparison function (so the
-- C sort calls back into the interpreter), string keys, and the garbage those leave behind.
local scale = SCALE
local sum = 0
local seed = 12345
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
for round = 1, scale do
  local t = {}
  for i = 1, 20000 do
    t[i] = { key = rnd(1000000), name = "item" .. rnd(5000) }
  end
  table.sort(t, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.name < b.name
  end)
  local counts = {}
  for i = 1, #t do
    local n = t[i].name
    counts[n] = (counts[n] or 0) + 1
  end
  local names = {}
  for n in pairs(counts) do names[#names + 1] = n end
  table.sort(names)
  sum = (sum + t[1].key + t[#t].key + #names + counts[names[1]]) % 1000000007
end
return sum
