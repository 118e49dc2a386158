"""The shared frontier's operations, as Lua scripts: each one atomic and one round trip.

Keys, under the crawl's prefix ``P`` (``topicspider:<crawl id>``):

=====================  =========  ==============================================================
``P:q:<slot>``         zset       queued requests of one download slot; score −relevance, member
                                  ``<16 hex digits of sequence><fingerprint>`` (ties: first in)
``P:tops:<partition>`` zset       slot → score of its best request, to pick the best slot fast
``P:req``              hash       member → serialized request, while queued or in flight
``P:where``            hash       fingerprint → ``slot \\t partition \\t member`` while queued
``P:size``             hash       partition → number of queued requests
``P:busy``             hash       slot → requests downloading on it, cluster-wide
``P:parsing``          hash       slot → requests downloaded and still being parsed, cluster-wide
``P:judged``           string     pages whose links are all queued, by all workers
``P:led``              hash       slot → ``P:judged`` when a request last went ahead of its best
                                  (``TOPIC_PARSE_BACKLOG_AFTER``)
``P:held:<id>``        hash       slot → requests downloading on it from worker ``id``
``P:serving:<part>``   set        workers serving a partition, to share its slots fairly
``P:partitions``       hash       worker id → the partitions it serves (``0,2``)
``P:ready``            hash       slot → time (ms) its next request may start (``DOWNLOAD_DELAY``)
``P:inflight:<id>``    hash       member → ``slot \\t partition \\t score``: worker ``id``'s lease;
                                  ``\\t d`` appended once the page is downloaded, ``\\t q`` once
                                  its links are queued (it holds no slot, only the lease)
``P:active``           string     requests in flight, cluster-wide
``P:workers``          zset       worker id → lease deadline (ms, Redis clock)
``P:clock``            string     the Redis time of the last heartbeat of any worker
``P:seq``              string     the sequence that orders equal scores
``P:dupefilter``       set        fingerprints seen (:mod:`topicspider.redis.dupefilter`)
``P:bloom``            string     or, with ``TOPIC_DUPEFILTER=bloom``, the bits of a Bloom filter
``P:bloom:urls``       string     URLs added to the Bloom filter, by all workers
``P:meta``             hash       keywords, partitions, stay-on-site flag, dupefilter, allow and
                                  deny regexes of the crawl; without it there is no crawl (``GONE``)
``P:ended``            string     why the crawl was removed (``seeds_failed``), for five minutes,
                                  for its other workers; gone when the crawl is made again
``P:domains``          set        the sites the crawl stays on; it grows when a worker joins with
                                  seeds on other sites or a seed redirects to another host
``P:host_pages``       hash       host → pages downloaded from it, by all workers (only with
                                  ``TOPIC_MAX_PAGES_PER_HOST``; :mod:`topicspider.hostcap`)
``P:fetched``          hash       URL template → pages of it fetched, by all workers
``P:on_topic``         hash       URL template → pages of it on topic, by all workers
                                  (:mod:`topicspider.redis.patterns`)
``P:best:<top>``       zset       the best relevances of the pages judged by all workers (the
                                  ``TOPIC_THRESHOLD_TOP`` best; member: unique per page)
                                  (:mod:`topicspider.redis.thresholds`)
``P:moments``          hash       sums of the link-score terms and of the relevance of the pages
                                  their links led to, by all workers (:mod:`topicspider.redis.mix`)
``P:simhash:<k>``      hash       ``<block number>:<block>`` → the 8-byte SimHashes of the stored
                                  pages with that block, for ``TOPIC_DUPLICATE_DISTANCE=k``
                                  (:mod:`topicspider.redis.simhashes`)
``P:simhash:<k>:pages`` hash      a stored page's SimHash → its page key (8 bytes of its URL's
                                  SHA-1): a page fetched again is no duplicate of itself
``P:synced``           hash       a learner of a worker → the number of its last section of counts
                                  added, so that one sent again is added once
                                  (:class:`topicspider.redis.learning.Outbox`)
``P:dropped``          set        ``host \t key=value``: the query parameters a worker learned
                                  change nothing on a host (:mod:`topicspider.redis.parameters`)
=====================  =========  ==============================================================

Times come from Redis (``TIME``), so workers' clocks need not agree. Scripts are run by SHA
and loaded again when Redis has forgotten them (redis-py ``Script``), e.g. after a restart.
"""

from __future__ import annotations

__all__ = [
    "ADD_DOMAINS",
    "ADD_MOMENTS",
    "ADD_SIMHASH",
    "GONE",
    "HEARTBEAT",
    "JOIN",
    "LEAVE",
    "MERGE_BEST",
    "READ_RECORD",
    "STEP",
    "SYNC_DROPPED",
    "SYNC_TEMPLATES",
    "TAKE_HOST_PAGE",
]

#: What ``STEP`` and ``HEARTBEAT`` answer, changing nothing, when the crawl's record is gone
#: (Redis restarted without its data, or the crawl was deleted): its frontier and seen-set
#: went with it, and a worker carrying on would crawl again from the links it happens to find.
GONE = b"gone"

#: The scripts that add what a worker learned or counted take ``P:meta`` as their last key
#: and answer GONE without writing when the crawl is gone: a worker that has not noticed yet
#: would otherwise make those keys again, for a crawl nobody runs.
_UNLESS_GONE = r"""
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then return 'gone' end
"""

_COMMON = r"""
local P = ARGV[1]
local function gone() return redis.call('EXISTS', P .. ':meta') == 0 end
local function qkey(slot) return P .. ':q:' .. slot end
local function tkey(part) return P .. ':tops:' .. part end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fields(entry)
  local out = {}
  for f in string.gmatch(entry, '[^\t]+') do out[#out + 1] = f end
  return out
end

-- Queue a member (new or given back) in its slot; keep the slot's best score in tops.
local function enqueue(slot, part, member, neg)
  redis.call('ZADD', qkey(slot), neg, member)
  redis.call('ZADD', tkey(part), 'LT', neg, slot)
  redis.call('HSET', P .. ':where', string.sub(member, 17), slot .. '\t' .. part .. '\t' .. member)
  redis.call('HINCRBY', P .. ':size', part, 1)
end

local function decrement(counts, slot)
  if redis.call('HINCRBY', counts, slot, -1) <= 0 then redis.call('HDEL', counts, slot) end
end

-- A lease stops holding its slot: downloading, or downloaded and parsing (state 'd').
local function free(worker, f)
  if f[4] == 'd' then
    decrement(P .. ':parsing', f[1])
  elseif f[4] == nil then
    decrement(P .. ':busy', f[1])
    decrement(P .. ':held:' .. worker, f[1])
  end
end

-- End a lease: an acknowledged request is forgotten, a given-back one is queued again.
local function release(worker, member, requeue)
  local key = P .. ':inflight:' .. worker
  local entry = redis.call('HGET', key, member)
  if not entry then return 0 end
  redis.call('HDEL', key, member)
  local f = fields(entry)
  free(worker, f)
  redis.call('DECR', P .. ':active')
  if requeue then
    enqueue(f[1], f[2], member, f[3])
  else
    redis.call('HDEL', P .. ':req', member)
  end
  return 1
end

-- A worker leaves the crawl (or is declared dead): it no longer shares slots.
local function forget(worker)
  local parts = redis.call('HGET', P .. ':partitions', worker)
  if parts then
    for part in string.gmatch(parts, '[^,]+') do
      redis.call('SREM', P .. ':serving:' .. part, worker)
    end
  end
  redis.call('HDEL', P .. ':partitions', worker)
  redis.call('ZREM', P .. ':workers', worker)
  redis.call('DEL', P .. ':held:' .. worker)
end
"""

#: Pushes, acknowledgements and pops of one worker in one call (see ``RedisFrontier.step``).
STEP = (
    _COMMON
    + r"""
local worker, limit = ARGV[2], tonumber(ARGV[3])
local delay, wanted = tonumber(ARGV[4]), tonumber(ARGV[5])
local parts = {}
for p in string.gmatch(ARGV[6], '[^,]+') do parts[#parts + 1] = p end
local dupekey, bloom = ARGV[7], ARGV[8] == 'bloom'
local backlog, backlog_after = tonumber(ARGV[9]), tonumber(ARGV[10])
if gone() then return 'gone' end
-- Pages judged by all workers, this step's among them (TOPIC_PARSE_BACKLOG_AFTER).
local judged = tonumber(redis.call('GET', P .. ':judged') or '0') + tonumber(ARGV[11])

-- A request that goes ahead of its slot's best queued one: the slot's pages change its
-- choice, and it waits for their links for `backlog_after` pages judged.
local function note_lead(slot, part, neg)
  if backlog > 0 and backlog_after > 0 then
    local best = redis.call('ZSCORE', tkey(part), slot)
    if best and tonumber(neg) < tonumber(best) then
      redis.call('HSET', P .. ':led', slot, judged)
    end
  end
end

local function rescore(fp, neg, blob)
  local entry = redis.call('HGET', P .. ':where', fp)
  if not entry then return 0 end
  local f = fields(entry)
  local old = redis.call('ZSCORE', qkey(f[1]), f[3])
  if not old then return 0 end
  if tonumber(neg) < tonumber(old) then
    note_lead(f[1], f[2], neg)
    redis.call('ZADD', qkey(f[1]), neg, f[3])
    redis.call('HSET', P .. ':req', f[3], blob)
    redis.call('ZADD', tkey(f[2]), 'LT', neg, f[1])
    return 2
  end
  return 3
end

local function insert(fp, slot, part, neg, blob)
  local member = string.format('%016x', redis.call('INCR', P .. ':seq')) .. fp
  redis.call('HSET', P .. ':req', member, blob)
  note_lead(slot, part, neg)
  enqueue(slot, part, member, neg)
  return 1
end

-- Add a fingerprint to the crawl's seen-set; true if it was not there. The Bloom filter's
-- bit positions (decimal, comma-separated) come from the worker: one BITFIELD sets them all.
local function add_seen(fp, bits)
  if not bloom then return redis.call('SADD', dupekey, fp) == 1 end
  local args = {}
  for position in string.gmatch(bits, '%d+') do
    args[#args + 1] = 'SET'
    args[#args + 1] = 'u1'
    args[#args + 1] = position
    args[#args + 1] = 1
  end
  for _, old in ipairs(redis.call('BITFIELD', dupekey, unpack(args))) do
    if old == 0 then
      redis.call('INCR', dupekey .. ':urls')
      return true
    end
  end
  return false
end

-- mode c: check the crawl's seen-set (ARGV[7], ARGV[8]); n: new by the worker's own
-- dupefilter; f: dont_filter, always queued; r: seen before, only raise the queued score.
local statuses = {}
local i = 13
for _ = 1, tonumber(ARGV[12]) do
  local mode, fp, slot, part = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local neg, blob, bits = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  i = i + 7
  local status
  if mode == 'f' then
    status = insert(fp, slot, part, neg, blob)
  elseif mode == 'c' and add_seen(fp, bits) then
    status = insert(fp, slot, part, neg, blob)
  elseif mode == 'n' and redis.call('HEXISTS', P .. ':where', fp) == 0 then
    status = insert(fp, slot, part, neg, blob)
  else
    status = rescore(fp, neg, blob)
  end
  statuses[#statuses + 1] = status
end
if tonumber(ARGV[11]) > 0 then redis.call('INCRBY', P .. ':judged', ARGV[11]) end

local acked = 0
local acks = tonumber(ARGV[i])
for j = i + 1, i + acks do acked = acked + release(worker, ARGV[j], false) end
i = i + acks + 1

-- Leases whose page is downloaded and being parsed: their slot may download again, up to
-- `backlog` more pages of it waiting for their parse (TOPIC_PARSE_BACKLOG), once the last
-- `backlog_after` pages judged sent it no request ahead of its best.
local inflight = P .. ':inflight:' .. worker
for j = i + 1, i + tonumber(ARGV[i]) do
  local entry = redis.call('HGET', inflight, ARGV[j])
  local f = entry and fields(entry)
  if f and f[4] == nil then
    free(worker, f)
    redis.call('HINCRBY', P .. ':parsing', f[1], 1)
    redis.call('HSET', inflight, ARGV[j], entry .. '\td')
  end
end
i = i + tonumber(ARGV[i]) + 1

-- Leases whose links are all queued: the slot's next choice cannot gain from waiting for
-- them, so they hold no slot; they stay leased until acknowledged (their item may still be
-- being stored).
for j = i + 1, i + tonumber(ARGV[i]) do
  local entry = redis.call('HGET', inflight, ARGV[j])
  local f = entry and fields(entry)
  if f and f[4] ~= 'q' then
    free(worker, f)
    redis.call('HSET', inflight, ARGV[j], f[1] .. '\t' .. f[2] .. '\t' .. f[3] .. '\tq')
  end
end

local now = 0
if delay > 0 and wanted > 0 then now = now_ms() end
-- A slot may start a request if it has fewer than `limit` in flight in the cluster and this
-- worker holds less than its share of them: the limit divided among the workers serving
-- the partition, so that a worker that frees a slot does not take it back at once forever.
local busy, held, parsing, shares = {}, {}, {}, {}
local function slot_backlog(slot)
  if busy[slot] + parsing[slot] < limit or backlog_after == 0 then return backlog end
  local led = tonumber(redis.call('HGET', P .. ':led', slot) or '0')
  if judged - led < backlog_after then return 0 end
  return backlog
end
-- Milliseconds until the first slot held back only by DOWNLOAD_DELAY may start (-1: none).
local soonest = -1
local function eligible(slot, part)
  if busy[slot] == nil then
    busy[slot] = tonumber(redis.call('HGET', P .. ':busy', slot) or '0')
    held[slot] = tonumber(redis.call('HGET', P .. ':held:' .. worker, slot) or '0')
    parsing[slot] = tonumber(redis.call('HGET', P .. ':parsing', slot) or '0')
  end
  if shares[part] == nil then
    local serving = math.max(1, redis.call('SCARD', P .. ':serving:' .. part))
    shares[part] = math.ceil(limit / serving)
  end
  if busy[slot] >= limit or held[slot] >= shares[part] then return false end
  if busy[slot] + parsing[slot] >= limit + slot_backlog(slot) then return false end
  if delay > 0 then
    local ready = tonumber(redis.call('HGET', P .. ':ready', slot) or '0')
    if ready > now then
      if soonest < 0 or ready - now < soonest then soonest = ready - now end
      return false
    end
  end
  return true
end

-- The best slot of a partition that may start a request now: lowest score, then the
-- oldest head among slots with that score (at most 32 compared).
local function best_of(part)
  local bslot, bneg, bmember
  local ties, start = 0, 0
  while true do
    local batch = redis.call('ZRANGE', tkey(part), start, start + 31, 'WITHSCORES')
    if #batch == 0 then return bslot, bneg, bmember end
    for k = 1, #batch, 2 do
      local slot, neg = batch[k], tonumber(batch[k + 1])
      if bslot and neg > bneg then return bslot, bneg, bmember end
      if eligible(slot, part) then
        local head = redis.call('ZRANGE', qkey(slot), 0, 0)[1]
        if head and (not bslot or head < bmember) then bslot, bneg, bmember = slot, neg, head end
        ties = ties + 1
        if ties >= 32 then return bslot, bneg, bmember end
      end
    end
    start = start + 32
  end
end

local popped = {}
-- Requests handed out while pages of their slot were being parsed (topic/chosen_early).
local early = 0
for _ = 1, wanted do
  local bslot, bpart, bneg, bmember
  for _, part in ipairs(parts) do
    local slot, neg, member = best_of(part)
    if slot and (not bslot or neg < bneg or (neg == bneg and member < bmember)) then
      bslot, bpart, bneg, bmember = slot, part, neg, member
    end
  end
  if not bslot then break end
  local q = qkey(bslot)
  local score = redis.call('ZSCORE', q, bmember)
  redis.call('ZREM', q, bmember)
  local head = redis.call('ZRANGE', q, 0, 0, 'WITHSCORES')
  if #head == 0 then
    redis.call('ZREM', tkey(bpart), bslot)
  else
    redis.call('ZADD', tkey(bpart), head[2], bslot)
  end
  local fp = string.sub(bmember, 17)
  if redis.call('HGET', P .. ':where', fp) == bslot .. '\t' .. bpart .. '\t' .. bmember then
    redis.call('HDEL', P .. ':where', fp)
  end
  redis.call('HINCRBY', P .. ':size', bpart, -1)
  redis.call('HSET', P .. ':inflight:' .. worker, bmember, bslot .. '\t' .. bpart .. '\t' .. score)
  if busy[bslot] + parsing[bslot] >= limit then early = early + 1 end
  busy[bslot] = redis.call('HINCRBY', P .. ':busy', bslot, 1)
  held[bslot] = redis.call('HINCRBY', P .. ':held:' .. worker, bslot, 1)
  redis.call('INCR', P .. ':active')
  if delay > 0 then redis.call('HSET', P .. ':ready', bslot, now + delay) end
  popped[#popped + 1] = bmember
  popped[#popped + 1] = redis.call('HGET', P .. ':req', bmember)
end

local queued, everywhere = 0, 0
for _, part in ipairs(parts) do
  queued = queued + tonumber(redis.call('HGET', P .. ':size', part) or '0')
end
for _, size in ipairs(redis.call('HVALS', P .. ':size')) do
  everywhere = everywhere + tonumber(size)
end
local active = tonumber(redis.call('GET', P .. ':active') or '0')
local seen = 0
if bloom then seen = tonumber(redis.call('GET', dupekey .. ':urls') or '0') end
local domains = redis.call('SCARD', P .. ':domains')
return {statuses, popped, queued, everywhere, active, acked, seen, soonest, domains, early}
"""
)

#: Renew this worker's lease and give back the requests of workers whose lease ran out.
#: If no worker at all was heard of for a whole lease (Redis was down, or the cluster
#: stopped), every worker gets a new lease instead: a pause of Redis kills no one.
HEARTBEAT = (
    _COMMON
    + r"""
local worker, lease, parts = ARGV[2], tonumber(ARGV[3]), ARGV[4]
if gone() then return 'gone' end
local workers = P .. ':workers'
local now = now_ms()
local clock = tonumber(redis.call('GET', P .. ':clock') or '0')
redis.call('SET', P .. ':clock', now)
local known = redis.call('ZSCORE', workers, worker) and 1 or 0
local reclaimed = 0
if known == 0 then
  -- Declared dead while it stalled, it may have popped since: it drops what it holds
  -- (see the reply), so what Redis still leases to it is queued again, not stranded.
  for _, member in ipairs(redis.call('HKEYS', P .. ':inflight:' .. worker)) do
    reclaimed = reclaimed + release(worker, member, true)
  end
end
if clock > 0 and now - clock > lease then
  for _, other in ipairs(redis.call('ZRANGE', workers, 0, -1)) do
    redis.call('ZADD', workers, now + lease, other)
  end
end
redis.call('ZADD', workers, now + lease, worker)
redis.call('HSET', P .. ':partitions', worker, parts)
for part in string.gmatch(parts, '[^,]+') do
  redis.call('SADD', P .. ':serving:' .. part, worker)
end
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', workers, '-inf', now)) do
  for _, member in ipairs(redis.call('HKEYS', P .. ':inflight:' .. dead)) do
    reclaimed = reclaimed + release(dead, member, true)
  end
  forget(dead)
end
return {reclaimed, known}
"""
)

#: Give back this worker's leases except the members listed (all of them when it leaves).
#: ARGV[3] is 1 when the worker leaves the crawl.
LEAVE = (
    _COMMON
    + r"""
local worker, leaving = ARGV[2], ARGV[3] == '1'
local held = {}
for k = 4, #ARGV do held[ARGV[k]] = true end
local returned = 0
for _, member in ipairs(redis.call('HKEYS', P .. ':inflight:' .. worker)) do
  if not held[member] then returned = returned + release(worker, member, true) end
end
if leaving then forget(worker) end
return returned
"""
)

#: Create the crawl record, or check a worker against it. ARGV: prefix, keywords text,
#: partitions, stay-on-site flag (1/0), whether the worker has seeds (1/0), its dupefilter
#: (``redis.dupefilter.seen_set``), its allow and deny regexes ("": none), then its domains.
#: Returns {"none"}, {"keywords", stored}, {"partitions", stored}, {"dupefilter", stored},
#: {"links", stored stay-on-site flag, allow, deny}, or
#: {"created" | "joined", stay-on-site flag, domains...}. A crawl recorded without a
#: dupefilter (older versions) used the exact set; one without allow or deny had none.
JOIN = r"""
local P = ARGV[1]
local meta, domains = P .. ':meta', P .. ':domains'
local stored = redis.call('HGET', meta, 'keywords')
if not stored then
  if ARGV[5] ~= '1' then return {'none'} end
  redis.call('HSET', meta, 'keywords', ARGV[2], 'partitions', ARGV[3], 'stay_on_site', ARGV[4],
             'dupefilter', ARGV[6], 'allow', ARGV[7], 'deny', ARGV[8])
  redis.call('DEL', P .. ':ended')
  for k = 9, #ARGV do redis.call('SADD', domains, ARGV[k]) end
  local out = {'created', ARGV[4]}
  for _, d in ipairs(redis.call('SMEMBERS', domains)) do out[#out + 1] = d end
  return out
end
if stored ~= ARGV[2] then return {'keywords', stored} end
local parts = redis.call('HGET', meta, 'partitions')
if parts ~= ARGV[3] then return {'partitions', parts} end
local dupefilter = redis.call('HGET', meta, 'dupefilter') or 'TOPIC_DUPEFILTER=exact'
if dupefilter ~= ARGV[6] then return {'dupefilter', dupefilter} end
local links = redis.call('HMGET', meta, 'stay_on_site', 'allow', 'deny')
local stay, allow, deny = links[1], links[2] or '', links[3] or ''
if stay ~= ARGV[4] or allow ~= ARGV[7] or deny ~= ARGV[8] then
  return {'links', stay, allow, deny}
end
for k = 9, #ARGV do redis.call('SADD', domains, ARGV[k]) end
local out = {'joined', stay}
for _, d in ipairs(redis.call('SMEMBERS', domains)) do out[#out + 1] = d end
return out
"""

#: The crawl record's keywords, partitions, seen-set, stay-on-site flag, allow and deny (nils:
#: no crawl). KEYS: ``P:meta``. A script that reads Redis's clock too, as the frontier's do,
#: so that a user Redis's ACL does not let run them (``+@scripting``, ``+time``) is refused
#: before the crawl, not in it.
READ_RECORD = r"""
redis.call('TIME')
return redis.call('HMGET', KEYS[1], 'keywords', 'partitions', 'dupefilter', 'stay_on_site',
                  'allow', 'deny')
"""

#: Count a download from a host unless it has had its pages (``TOPIC_MAX_PAGES_PER_HOST``).
#: KEYS: ``P:host_pages``, ``P:meta``. ARGV: host, cap. Returns 1 if counted, 0 if the host
#: is full.
TAKE_HOST_PAGE = (
    _UNLESS_GONE
    + r"""
local taken = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if taken >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return 1
"""
)

#: Give back a download counted for a host (a redirect, a failed download), unless the
#: crawl is gone: a plain HINCRBY made ``P:host_pages`` again. KEYS and ARGV[1]: as above.
GIVE_BACK_HOST_PAGE = (
    _UNLESS_GONE
    + r"""
return redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
"""
)

#: Add sites the crawl stays on. KEYS: ``P:domains``, ``P:meta``. ARGV: the sites.
ADD_DOMAINS = (
    _UNLESS_GONE
    + r"""
return redis.call('SADD', KEYS[1], unpack(ARGV))
"""
)

#: Add a stored page's SimHash unless one within k bits is there (near-duplicates). KEYS:
#: ``P:simhash:<k>``, ``P:simhash:<k>:pages``, ``P:meta``. ARGV: the SimHash (8 bytes,
#: big-endian), k, the page's key (8 bytes of its URL's SHA-1), then its k + 1 blocks as
#: fields. Two SimHashes within k bits share a block, so only those under its fields are
#: compared. One the same page left is no duplicate: a worker killed between adding it and
#: storing the page, whose request another fetched again (``P:simhash:<k>:pages``, SimHash →
#: page key). Returns the near one found (8 bytes), or nil once added.
ADD_SIMHASH = (
    _UNLESS_GONE
    + r"""
local simhash, k, page = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local function near(other)
  local bits = 0
  for i = 1, 8 do
    local x = bit.bxor(string.byte(simhash, i), string.byte(other, i))
    while x > 0 do
      x = bit.band(x, x - 1)
      bits = bits + 1
    end
    if bits > k then return false end
  end
  return true
end
local lists = {}
for n = 4, #ARGV do
  local list = redis.call('HGET', KEYS[1], ARGV[n]) or ''
  for i = 1, #list, 8 do
    local other = string.sub(list, i, i + 7)
    if near(other) and redis.call('HGET', KEYS[2], other) ~= page then return other end
  end
  lists[n] = list
end
for n = 4, #ARGV do redis.call('HSET', KEYS[1], ARGV[n], lists[n] .. simhash) end
redis.call('HSET', KEYS[2], simhash, page)
return nil
"""
)

#: What a learner of a worker sends is numbered sections of counts, held and sent again
#: until answered (:class:`topicspider.redis.learning.Outbox`): a section whose number is
#: not above the last this sender had added was added before (its answer lost on the way
#: back) and is not added again. ``KEYS[#KEYS - 1]`` is ``P:synced`` (sender → last number
#: added). ARGV: sender, then for each section its number, its count of values, the values.
#: Gives ``sections``: {first value, last value, whether to add}.
_SECTIONS = r"""
local synced, sender = KEYS[#KEYS - 1], ARGV[1]
local last = tonumber(redis.call('HGET', synced, sender) or '0')
local sections, newest = {}, last
local i = 2
while i <= #ARGV do
  local number, length = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  sections[#sections + 1] = {i + 2, i + 1 + length, number > last}
  newest = math.max(newest, number)
  i = i + 2 + length
end
if newest > last then redis.call('HSET', synced, sender, newest) end
"""

#: Add a worker's counts of URL templates since its last sync to the crawl's, and return the
#: crawl's. KEYS: ``P:fetched``, ``P:on_topic``, ``P:synced``, ``P:meta``. ARGV: sections
#: (see ``_SECTIONS``) of template, fetched, on topic, ... (0, 0 for a template only looked
#: at). Returns fetched, on topic, ... of each template in the order sent.
SYNC_TEMPLATES = (
    _UNLESS_GONE
    + _SECTIONS
    + r"""
local out = {}
for _, section in ipairs(sections) do
  for j = section[1], section[2], 3 do
    for k = 1, 2 do
      local added = tonumber(ARGV[j + k])
      if section[3] and added > 0 then
        out[#out + 1] = redis.call('HINCRBY', KEYS[k], ARGV[j], added)
      else
        out[#out + 1] = tonumber(redis.call('HGET', KEYS[k], ARGV[j]) or '0')
      end
    end
  end
end
return out
"""
)

#: Add the query parameters a worker learned change nothing (ARGV: ``host \t key=value``,
#: ...) to the crawl's; return all of the crawl's. KEYS: ``P:dropped``, ``P:meta``.
SYNC_DROPPED = (
    _UNLESS_GONE
    + r"""
if #ARGV > 0 then redis.call('SADD', KEYS[1], unpack(ARGV)) end
return redis.call('SMEMBERS', KEYS[1])
"""
)

#: Add a worker's best relevances (ARGV: how many the crawl keeps, then relevance, member
#: pairs) to the crawl's; return the relevances the crawl keeps. KEYS: ``P:best:<top>``,
#: ``P:meta``.
MERGE_BEST = (
    _UNLESS_GONE
    + r"""
local keep = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -keep - 1)
local out = {}
local best = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 2, #best, 2 do out[#out + 1] = best[i] end
return out
"""
)

#: Add a worker's sums (sections, see ``_SECTIONS``, of field, amount pairs) to the
#: crawl's; return the crawl's, field, total, .... Floats stay strings: a number returned
#: from Lua would lose its fraction. KEYS: ``P:moments``, ``P:synced``, ``P:meta``.
ADD_MOMENTS = (
    _UNLESS_GONE
    + _SECTIONS
    + r"""
for _, section in ipairs(sections) do
  if section[3] then
    for j = section[1], section[2], 2 do
      redis.call('HINCRBYFLOAT', KEYS[1], ARGV[j], ARGV[j + 1])
    end
  end
end
return redis.call('HGETALL', KEYS[1])
"""
)
