-- One decision of a shared rate limiter, atomically on the Redis server (see _redis.py).
--
-- These are the rules of _machine.py, step for step, in the names used there: a change here
-- is a change there, and the test suite runs every rule against both (tests/test_limits*.py),
-- with a property test driving both with the same random calls (test_limits_stores_agree.py).
--
-- The script runs on every decision and its cost is most of what a decision adds to a round
-- trip, so it does only what the decision needs: the state is fixed-size binary, unpacked into
-- locals (no table to build); an admission reads only the windows it takes from, and a window
-- only near its two ends (below), so its cost does not grow with the window; the last failure
-- is read only by a refusal or a reading; and each decision's functions are made only by the
-- decision that calls them (a function is a new closure on every run of a script). The
-- commonest decision, an admission of one budget on a closed circuit, is made by a short path
-- of its own, on the window's bytes, with no table or function made (the tables, functions
-- and strings a run makes cost more than its arithmetic: each is allocated, then collected).
--
-- KEYS[1]  the limiter's hash, fields:
--          's'  the state but the windows and the last failure: STATE's doubles, in its order
--          'b:' .. a budget's name  its window's head: the units the window holds, the
--               numbers of its first and past-its-last sealed chunk, the length of its oldest
--               takes, then those oldest takes and then its newest takes (see the windows)
--          'b:' .. a budget's name .. ':' .. n  the window's sealed chunk number n: takes
--          'f'  the last failure (MessagePack: service, detail, status, retry_after)
--          (A take is 16 bytes: its start and units, two doubles. 'w:' .. a budget's name,
--          the whole window in one field, was the form before: never read, so a limiter's
--          windows start empty once, and the field goes when the key expires.)
-- ARGV[1]  the decision: reserve, unreserve, succeed, fail, release or read; or one of the
--          keeper's own (no rule of _machine.py): fill (a window that vanished, rebuilt full)
--          or tally (failures a process recorded alone while Redis was out of reach)
-- ARGV[2]  the settings, 13 little-endian doubles: longest, max_throttle, max_wait_seconds,
--          cooldown_seconds (the four an admission reads), failure_step, recovery_step,
--          successes_per_step, quiet_seconds, quiet_recovery_step, failures_to_open,
--          max_cooldown_seconds, probe_timeout_seconds, retry_after_cap
-- ARGV[3]  the budgets: max_units and window_seconds of each, little-endian doubles
-- ARGV[4]  the budgets' window fields ('b:' .. the name, quoted, so without commas or colons),
--          joined by commas
-- ARGV[5]  the time of the decision, or '' for the server's clock (TIME)
-- ARGV[6]  the decision's arguments (see each below)
--
-- The reply starts with the kept code: 2 x (the milliseconds the state is still kept) + 1 when
-- the state existed before the decision (0: it was made anew; a reading's code is that bit
-- alone). An admission is one string of numbers: the code and the permit, then the wait and
-- the start when the call must wait; a refusal or a reading is an array; any other decision's
-- reply is the code alone. Times travel as text ('%.17g'), every digit kept.

local key, op = KEYS[1], ARGV[1]
-- The settings every decision reads; the others are read below by the decisions that need them.
local longest, max_throttle, max_wait, cooldown_seconds = struct.unpack('<dddd', ARGV[2])

local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = t[1] + t[2] / 1e6  -- numbers from their text: Lua's arithmetic reads them
else
  now = tonumber(ARGV[5])
end

-- The state: LimiterState's fields, by their names there, but the windows, the last failure
-- and until when the key is kept (expires). The circuit's state is a number; a probe's permit
-- is negative: NONE (0) stands for no probe, since every number is true in Lua.
local CLOSED, OPEN, HALF_OPEN = 0, 1, 2
local NONE = 0
local STATE = '<dddddddddddddddd'  -- 16 doubles, in the order below
local TAKE, CHUNK, HEAD = 16, 16, 32  -- a take's bytes, a chunk's takes, a window head's bytes
local windowed = op == 'reserve' or op == 'unreserve' or op == 'fill'

-- The budgets taken from: one budget (the common case) in locals, several in lists (below).
local one = #ARGV[3] == 16  -- one budget: two doubles
local one_units, one_field  -- the one budget's units and window field, when it takes any
local nb = 0
local units = windowed and (op == 'unreserve' and ARGV[7] or ARGV[6])  -- per budget, by commas
if windowed and one then
  units = units + 0
  if units > 0 then one_units, one_field, nb = units, ARGV[4], 1 end
end
local index, takes, fields  -- several budgets: those taken from, their units, the fields read
if windowed and not one then
  index, takes, fields = {}, {}, {'s'}
  local i, all = 0, {}
  for name in string.gmatch(ARGV[4], '[^,]+') do
    i = i + 1
    all[i] = name
  end
  i = 0
  for v in string.gmatch(units, '[^,]+') do
    i = i + 1
    v = tonumber(v)
    if v > 0 then
      nb = nb + 1
      index[nb], takes[nb], fields[nb + 1] = i, v, all[i]
    end
  end
end
local stored, packed  -- the windows' fields and the state's
if one_field then
  stored = redis.call('HMGET', key, 's', one_field)
  packed = stored[1]
elseif nb > 0 then
  stored = redis.call('HMGET', key, unpack(fields))
  packed = stored[1]
else  -- the state alone: no table to build
  packed = redis.call('HGET', key, 's')
end
local existed = 1
local circuit, epoch, cooldown, opened_at, probe, probe_started, next_id, level, quiet_from,
      successes_toward_step, failures_at_max, blocked_until, successes, failures, refusals,
      expires
if packed then
  circuit, epoch, cooldown, opened_at, probe, probe_started, next_id, level, quiet_from,
    successes_toward_step, failures_at_max, blocked_until, successes, failures, refusals,
    expires = struct.unpack(STATE, packed)
else
  existed = 0  -- Rules.fresh
  circuit, epoch, cooldown, opened_at, probe, probe_started, next_id, level, quiet_from,
    successes_toward_step, failures_at_max, blocked_until, successes, failures, refusals,
    expires = CLOSED, 0, cooldown_seconds, -math.huge, NONE, 0.0, 1, 0.0, -math.huge, 0, 0,
    -math.huge, 0, 0, 0, -math.huge
end

local writes = nil  -- fields to write beside the state: a window's, a failure's
local dead = nil  -- fields to delete: sealed chunks whose takes moved to the head field
local rewrite = true  -- whether the state is written back: not by the short path below
local one_head = nil  -- the window head the short path below writes (no table made for it)
local admitted, admitted_wait, admitted_start = nil, 0, 0  -- an admission's permit, wait, start

-- --- an admission of one budget on a closed circuit (OneBudgetRules.reserve) -------------
-- The common case, on the path of every call, so it is done here alone, on the bytes of the
-- window as read (no table but the fields written, no function): forget the takes that can
-- never count again, start now or in turn after the last take, and add the take, as the
-- sliding windows below do (see there for the window's parts). It changes nothing until it
-- knows it can finish; anything else (a full window to walk, a wait too long, a take too
-- large) is left to the whole rules below, as if this had not been tried. The state itself
-- is unchanged, so it is written back only when its expiry moves on (below).
if one_units and circuit == CLOSED and op == 'reserve' then
  repeat
    local capacity, span = struct.unpack('<dd', ARGV[3])
    if one_units > capacity then break end
    local raw = stored[2] or ''
    local total, first, past, length, size = 0, 0, 0, 0, HEAD
    if raw ~= '' then
      total, first, past, length = struct.unpack('<dddd', raw)
      size = #raw
    end
    -- The oldest takes are old's bytes from pos to old_end (old is raw or, once they ran out,
    -- a sealed chunk read), the newest raw's bytes from new_from to size.
    local old, pos, old_end, new_from = raw, HEAD + 1, HEAD + length, HEAD + length + 1
    local window, widest = span * (1.0 + level), span * (1.0 + max_throttle)
    -- The pruning rule (in the loop below) is written four times, kept alike by hand: here,
    -- in `earliest` below, in SlidingWindow.earliest (_window.py) and in
    -- OneBudgetRules.reserve (_machine.py). tests/test_limits_redis_windows.py's
    -- test_every_copy_of_the_pruning_rule_keeps_the_same_takes drives all four with the same
    -- calls and fails when any one of them differs: change them together. (Here the capacity
    -- clause never decides alone: a take it forgets leaves the window full, which this path
    -- leaves to the whole rules, unchanged; the test breaks this copy by its other clauses.)
    local read = nil  -- the sealed chunks read: their takes move to the head
    while true do
      if pos > old_end then  -- the oldest takes ran out: the first chunk's, else the newest
        if first < past then
          local name = one_field .. ':' .. string.format('%d', first)
          old = redis.call('HGET', key, name) or ''
          pos, old_end, first = 1, #old, first + 1
          read = read or {}
          read[#read + 1] = name
        elseif new_from <= size then
          old, pos, old_end, new_from = raw, new_from, size, size + 1
        else
          break  -- an empty window
        end
      else
        local begun, taken = struct.unpack('<dd', old, pos)
        if begun + widest <= now or (begun + window <= now and total - taken >= capacity) then
          pos, total = pos + TAKE, total - taken
        else
          break
        end
      end
    end
    if total + one_units > capacity then break end  -- a full window: the walk below
    local start, last, last_taken = now, nil, 0
    local newest = new_from <= size  -- whether the last take is among the newest
    if newest then
      last, last_taken = struct.unpack('<dd', raw, size - TAKE + 1)
    elseif pos <= old_end then
      last, last_taken = struct.unpack('<dd', old, old_end - TAKE + 1)
    end
    if last and last > start then start = last end
    if blocked_until > start then start = blocked_until end
    local wait = start - now
    if wait > max_wait then break end  -- refused: the rules below say why

    -- The head written back: the oldest takes kept, the newest, then the take added.
    local old_to, new_to, added = old_end, size, one_units
    if last == start then  -- takes that start together count together: the last one grows
      added = last_taken + one_units
      if newest then new_to = size - TAKE else old_to = old_end - TAKE end
    end
    local oldest = old_to - pos + 1  -- the oldest takes' bytes kept
    local head, sealed  -- the head field; the chunk the newest takes are sealed into first
    if oldest <= 0 and new_to < new_from then  -- nothing else: the take is the oldest
      head = struct.pack('<dddddd', total + one_units, first, past, TAKE, start, added)
    elseif last ~= start and new_to - new_from + 1 >= CHUNK * TAKE then
      sealed = string.sub(raw, new_from, size)
      head = struct.pack('<ddddc0dd', total + one_units, first, past + 1, oldest,
                         string.sub(old, pos, old_to), start, added)
    elseif old == raw then  -- both parts, one after the other in raw
      head = struct.pack('<ddddc0dd', total + one_units, first, past, oldest,
                         string.sub(raw, pos, newest and new_to or old_to), start, added)
    else
      head = struct.pack('<ddddc0c0dd', total + one_units, first, past, oldest,
                         string.sub(old, pos, old_to), string.sub(raw, new_from, new_to), start,
                         added)
    end
    if sealed then  -- once in CHUNK admissions: the fields as the whole rules write them
      writes = {one_field, head, one_field .. ':' .. string.format('%d', past), sealed}
    else
      one_head = head
    end
    dead, rewrite = read, false
    admitted, admitted_wait, admitted_start = epoch, wait, start
  until true
end

-- --- the whole rules ------------------------------------------------------------------------
local wins = nil  -- the windows read (windowed decisions only)
local reply = nil  -- any other answer but the code
local failure_step, recovery_step, successes_per_step, quiet_seconds, quiet_recovery_step,
      failures_to_open, max_cooldown, probe_timeout, retry_cap
local quote_failure = nil  -- made only for an admission (which may be refused) or a reading
if not admitted then
  failure_step, recovery_step, successes_per_step, quiet_seconds, quiet_recovery_step,
    failures_to_open, max_cooldown, probe_timeout, retry_cap =
    struct.unpack('<ddddddddd', ARGV[2], 33)
  if one_field then index, takes, fields = {1}, {one_units}, {'s', one_field} end
  if op == 'reserve' or op == 'read' then
    quote_failure = function(reply, at)  -- the last failure, UpstreamFailure's fields, at at
      local packed = redis.call('HGET', key, 'f')
      if packed then
        local failure = cmsgpack.unpack(packed)
        reply[at], reply[at + 1], reply[at + 2] = failure[1], failure[2], failure[3]
        reply[at + 3] = failure[4] and string.format('%.17g', failure[4])
      end
    end
  end
end

if admitted then
  -- made above, on one budget's window head
elseif windowed then
  -- --- the sliding windows (SlidingWindow) ----------------------------------------------
  -- A window's takes, oldest first, are in three parts: its oldest takes and its newest
  -- takes, both in the window's head field (so a decision that takes from the head and
  -- appends at the end reads and writes that one field), and between them the sealed chunks,
  -- CHUNK takes each, read only once the oldest takes run out, or by a walk or a take given
  -- back that reaches them. The newest takes are sealed into a chunk once CHUNK of them are
  -- there; the oldest are refilled from the first chunk (or, with none, take the newest) once
  -- they are all forgotten. So every field a decision reads or writes is at most CHUNK takes
  -- long (the head field two chunks' worth), whatever the window holds.
  -- Kept so: the oldest takes are empty only in an empty window, and the newest takes are
  -- empty only with no chunk sealed.
  wins = {}
  writes, dead = {}, {}

  for i = 1, nb do  -- each window opened
    local w, raw = {field = fields[i + 1], total = 0, first = 0, past = 0, old = '', at = 1,
                    new = '', changed = false}, stored[i + 1]
    if raw then
      local length
      w.total, w.first, w.past, length = struct.unpack('<dddd', raw)
      w.old = string.sub(raw, HEAD + 1, HEAD + length)
      w.new = string.sub(raw, HEAD + length + 1)
    end
    wins[i] = w
  end

  local function chunk(w, n) return w.field .. ':' .. string.format('%d', n) end
  local function take_at(s, pos) return struct.unpack('<dd', s, pos) end

  -- The oldest takes ran out: the first sealed chunk's take their place, else the newest.
  local function refill(w)
    while w.at > #w.old do
      if w.first < w.past then
        local name = chunk(w, w.first)
        w.old, w.at, w.first = redis.call('HGET', key, name) or '', 1, w.first + 1
        dead[#dead + 1] = name
        w.changed = true
      elseif w.new ~= '' then
        w.old, w.at, w.new, w.changed = w.new, 1, '', true
      else
        return
      end
    end
  end

  local function last_start(w)  -- the newest take's start, or nil in an empty window
    if w.new ~= '' then return (take_at(w.new, #w.new - TAKE + 1)) end
    if w.at <= #w.old then return (take_at(w.old, #w.old - TAKE + 1)) end
    return nil
  end

  local function save(w)
    local old = w.at == 1 and w.old or string.sub(w.old, w.at)
    writes[#writes + 1] = w.field
    writes[#writes + 1] = struct.pack('<dddd', w.total, w.first, w.past, #old) .. old .. w.new
  end

  if op == 'reserve' or op == 'fill' then
    -- SlidingWindow.earliest (_window.py). Its pruning rule (the first loop) has three
    -- copies: the short path above, SlidingWindow.earliest, OneBudgetRules.reserve (_machine.py);
    -- tests/test_limits_redis_windows.py's
    -- test_every_copy_of_the_pruning_rule_keeps_the_same_takes holds the four together.
    local function earliest(w, units, window, wide, capacity)
      while true do  -- forget what can never count again
        if w.at > #w.old then
          refill(w)
          if w.at > #w.old then return now end  -- an empty window
        end
        local begun, taken = take_at(w.old, w.at)
        if begun + wide <= now or (begun + window <= now and w.total - taken >= capacity) then
          w.at, w.total, w.changed = w.at + TAKE, w.total - taken, true
        else
          break
        end
      end
      local start = last_start(w)
      if now > start then start = now end
      local newer = w.total
      if newer + units <= capacity then return start end  -- room: nothing to walk
      -- The walk from the oldest take, through the sealed chunks (each read when reached)
      -- and the newest takes, as far as it goes.
      local part, pos, next_chunk, last_part = w.old, w.at, w.first, false
      while newer + units > capacity do
        if pos > #part then
          if next_chunk < w.past then
            part, pos = redis.call('HGET', key, chunk(w, next_chunk)) or '', 1
            next_chunk = next_chunk + 1
          elseif not last_part then
            part, pos, last_part = w.new, 1, true
          else
            break
          end
        else
          local begun, taken = take_at(part, pos)
          if begun + window > start then start = begun + window end
          newer, pos = newer - taken, pos + TAKE
        end
      end
      return start
    end

    local function add(w, start, units)
      if w.new ~= '' then
        local last = #w.new - TAKE + 1
        local begun, taken = take_at(w.new, last)
        if begun == start then  -- takes that start together count together
          w.new = string.sub(w.new, 1, last - 1) .. struct.pack('<dd', start, taken + units)
        elseif #w.new >= CHUNK * TAKE then  -- sealed, in the same write
          writes[#writes + 1] = chunk(w, w.past)
          writes[#writes + 1] = w.new
          w.past, w.new = w.past + 1, struct.pack('<dd', start, units)
        else
          w.new = w.new .. struct.pack('<dd', start, units)
        end
      elseif w.at <= #w.old then  -- the oldest takes are the newest too
        local last = #w.old - TAKE + 1
        local begun, taken = take_at(w.old, last)
        if begun == start then
          w.old = string.sub(w.old, 1, last - 1) .. struct.pack('<dd', start, taken + units)
        else
          w.new = struct.pack('<dd', start, units)
        end
      else  -- an empty window
        w.old, w.at = struct.pack('<dd', start, units), 1
      end
      w.total, w.changed = w.total + units, true
    end

    -- --- admission (Rules.reserve, Circuit.admit_probe) ---------------------------------
    -- Inline, not a function: a function made on every run that sees this many locals costs
    -- more than the rest of an admission's rules. A refusal breaks out with its reason, the
    -- seconds it is off for, and the budget and units of a take too large.
    local refused, off_for, budget, too_many
    repeat
      if op == 'fill' then
        -- A window that vanished (a flush, a failover, an eviction) while a process knew it
        -- held calls: rebuilt full, each budget topped up to its capacity by a take starting
        -- now, so the rest of the fleet admits nothing until one window has passed, rather
        -- than a second budget on top of the calls made before it vanished.
        for k = 1, nb do
          if takes[k] > wins[k].total then add(wins[k], now, takes[k] - wins[k].total) end
        end
        break
      end
      local budgets = ARGV[3]
      for k = 1, nb do  -- a budget taking nothing never takes too much
        if takes[k] > struct.unpack('<d', budgets, 16 * index[k] - 15) then
          refused, off_for, budget, too_many = 'too-large', 0.0, index[k], takes[k]
          break
        end
      end
      if refused then break end
      local permit
      if circuit == CLOSED then
        permit = epoch
      else  -- Circuit.admit_probe
        local until_
        if circuit == OPEN then
          local reopens = opened_at + cooldown
          if now < reopens then
            refused, until_ = 'open', math.max(reopens, blocked_until)
          else
            circuit, probe = HALF_OPEN, NONE
          end
        elseif probe ~= NONE then
          local expires_at = probe_started + probe_timeout
          if now < expires_at then refused, until_ = 'probing', expires_at end
        end
        if refused then
          off_for = until_ - now
          break
        end
        permit = -next_id
        next_id, probe = next_id + 1, permit
      end
      local factor = 1.0 + level
      local widest = 1.0 + max_throttle
      local paced = now
      for k = 1, nb do
        local capacity, span = struct.unpack('<dd', budgets, 16 * index[k] - 15)
        local at = earliest(wins[k], takes[k], span * factor, span * widest, capacity)
        if at > paced then paced = at end
      end
      local start = paced
      if blocked_until > start then start = blocked_until end
      local wait = start - now
      if wait > max_wait then
        if permit < 0 then probe = NONE end
        refused, off_for = blocked_until > paced and 'held' or 'wait', wait
        break
      end
      for k = 1, nb do add(wins[k], start, takes[k]) end
      if permit < 0 then probe_started = start end
      admitted, admitted_wait, admitted_start = permit, wait, start
    until true
    if refused then
      refusals = refusals + 1
      reply = {0, refused, string.format('%.17g', off_for), budget or 0, too_many or 0}
      quote_failure(reply, 6)
    end
  else  -- unreserve (Rules.unreserve): start, then takes
    local start = tonumber(ARGV[6])
    -- The newest takes ran out: the last sealed chunk's take their place.
    local function unseal(w)
      while w.new == '' and w.first < w.past do
        w.past = w.past - 1
        local name = chunk(w, w.past)
        w.new, w.changed = redis.call('HGET', key, name) or '', true
        dead[#dead + 1] = name
      end
    end

    -- SlidingWindow.remove: the take that starts within a microsecond of ``start`` and holds
    -- the units, searched from the newest; takes are in the order of their starts, so the
    -- search stops at the first that started earlier.
    local function cut(s, pos, begun, taken, units)
      local rest = ''
      if taken > units then rest = struct.pack('<dd', begun, taken - units) end
      return string.sub(s, 1, pos - 1) .. rest .. string.sub(s, pos + TAKE)
    end
    local function remove(w, units)
      local function search(s, low)  -- the position of the take in s (from low), or 0, or -1
        for pos = #s - TAKE + 1, low, -TAKE do
          local begun, taken = take_at(s, pos)
          if math.abs(begun - start) <= 1e-6 and taken >= units then return pos, begun, taken end
          if begun < start - 1e-6 then return -1 end
        end
        return 0
      end
      local pos, begun, taken = search(w.new, 1)
      if pos > 0 then
        w.new = cut(w.new, pos, begun, taken, units)
        unseal(w)
      elseif pos == 0 then
        for n = w.past - 1, w.first, -1 do
          local name = chunk(w, n)
          local s = redis.call('HGET', key, name) or ''
          pos, begun, taken = search(s, 1)
          if pos > 0 then
            writes[#writes + 1] = name
            writes[#writes + 1] = cut(s, pos, begun, taken, units)
            break
          elseif pos < 0 then
            break
          end
        end
        if pos == 0 then
          pos, begun, taken = search(w.old, w.at)
          if pos > 0 then
            w.old = cut(w.old, pos, begun, taken, units)
            refill(w)
          end
        end
      end
      if pos > 0 then w.total, w.changed = w.total - units, true end
    end
    for k = 1, nb do remove(wins[k], takes[k]) end
  end
  for k = 1, nb do
    if wins[k].changed then save(wins[k]) end
  end
elseif op == 'read' then
  reply = {existed, circuit == CLOSED and 'closed' or circuit == OPEN and 'open' or 'half-open',
           string.format('%.17g', level), string.format('%.17g', cooldown), successes,
           failures, refusals}
  quote_failure(reply, 8)
  return reply
else
  -- --- the outcomes (Rules.succeed, fail, release; Circuit) -----------------------------
  local permit = ARGV[6] ~= '' and tonumber(ARGV[6]) or nil
  if op == 'succeed' then
    successes = successes + 1
    local current = true
    if permit ~= nil and permit < 0 then
      if permit ~= probe then
        current = false
      else  -- Circuit.close
        circuit, probe, cooldown, epoch = CLOSED, NONE, cooldown_seconds, epoch + 1
      end
    elseif not ((permit == nil or permit == epoch) and circuit == CLOSED) then
      current = false
    end
    if current then
      failures_at_max = 0
      if level > 0.0 then
        local step = nil
        if now - quiet_from >= quiet_seconds then
          step = quiet_recovery_step
        else
          successes_toward_step = successes_toward_step + 1
          if successes_toward_step >= successes_per_step then
            successes_toward_step, step = 0, recovery_step
          end
        end
        if step then  -- Rules._set_level: round(level, 9), within 0 and max_throttle
          level = math.min(math.max(tonumber(string.format('%.9f', level - step)), 0.0),
                           max_throttle)
        end
      end
    end
  else
    local function hold(retry_after)
      if retry_after ~= nil then
        retry_after = math.min(retry_after, retry_cap)
        if now + retry_after > blocked_until then blocked_until = now + retry_after end
      end
    end
    if op == 'fail' then
      -- permit, service, detail, status ('' for none), retry_after ('' for none)
      local status = ARGV[9] ~= '' and tonumber(ARGV[9]) or false
      local retry_after = ARGV[10] ~= '' and tonumber(ARGV[10]) or nil
      writes = {'f', cmsgpack.pack({ARGV[7], ARGV[8], status, retry_after or false})}
      local function open_circuit()
        circuit, opened_at, probe, epoch = OPEN, now, NONE, epoch + 1
        failures_at_max = 0
      end
      local function fail()
        failures = failures + 1
        quiet_from, successes_toward_step = now, 0
        hold(retry_after)
        if permit ~= nil and permit < 0 then
          if permit == probe then
            cooldown = math.min(cooldown * 2, max_cooldown)
            open_circuit()
          end
          return
        end
        if not ((permit == nil or permit == epoch) and circuit == CLOSED) then return end
        if level >= max_throttle then
          failures_at_max = failures_at_max + 1
          if failures_at_max >= failures_to_open then
            open_circuit()
            return
          end
        end
        level = math.min(math.max(tonumber(string.format('%.9f', level + failure_step)), 0.0),
                         max_throttle)
      end
      fail()
    elseif op == 'tally' then  -- count, then the last failure's fields as fail's
      -- Failures a process recorded alone while Redis was out of reach: counted for the fleet,
      -- the last one quoted; the throttle and the circuit are the fleet's own and stay.
      failures = failures + permit
      local status = ARGV[9] ~= '' and tonumber(ARGV[9]) or false
      local retry_after = ARGV[10] ~= '' and tonumber(ARGV[10]) or false
      writes = {'f', cmsgpack.pack({ARGV[7], ARGV[8], status, retry_after})}
    elseif op == 'release' then  -- permit, retry_after ('' for none)
      hold(ARGV[7] ~= '' and tonumber(ARGV[7]) or nil)
      if permit ~= nil and permit < 0 and permit == probe then probe = NONE end
    else
      return redis.error_reply('unknown limiter decision ' .. tostring(op))
    end
  end
end

-- --- the state written back ----------------------------------------------------------------

-- Rules.keep_for: kept well past the longest span any rule looks back or ahead. The expiry
-- is moved on only once less than half of that is left: one command less per decision.
local keep = blocked_until - now
if longest > keep then keep = longest end
keep = 2 * keep
local extend = expires < now + keep / 2
if extend then expires = now + keep end
if rewrite or extend then
  local state = struct.pack(STATE, circuit, epoch, cooldown, opened_at, probe, probe_started,
    next_id, level, quiet_from, successes_toward_step, failures_at_max, blocked_until,
    successes, failures, refusals, expires)
  if one_head then
    redis.call('HSET', key, 's', state, one_field, one_head)
  elseif writes and #writes > 0 then
    redis.call('HSET', key, 's', state, unpack(writes))
  else
    redis.call('HSET', key, 's', state)
  end
elseif one_head then  -- an admission on one budget's window head: the head alone
  redis.call('HSET', key, one_field, one_head)
else  -- the same, sealing a chunk
  redis.call('HSET', key, unpack(writes))
end
if dead and #dead > 0 then redis.call('HDEL', key, unpack(dead)) end
if extend then redis.call('PEXPIRE', key, math.ceil(keep * 1000)) end

local kept = 2 * math.ceil((expires - now) * 1000) + existed
if admitted then  -- one format for the whole reply
  if admitted_wait == 0 then return string.format('%d %d', kept, admitted) end
  return string.format('%d %d %.17g %.17g', kept, admitted, admitted_wait, admitted_start)
end
if reply then
  reply[1] = kept
  return reply
end
return kept
