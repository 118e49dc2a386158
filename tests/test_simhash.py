import os
import random
import subprocess
import sys

from topicspider.simhash import SimHashIndex, simhash
from topicspider.tokens import tokenize

ARTICLE = (
    "昨晚的足球比赛非常精彩，两队在上半场互有攻守，下半场主队连进两球锁定胜局。"
    "赛后主教练表示，球队的目标是冲击联赛冠军，年轻球员的表现令人满意。"
    "本赛季球队引进了三名外援，前锋线的冲击力明显增强，中场的传球成功率也有提高。"
    "门将在比赛最后十分钟做出两次关键扑救，帮助球队保住了胜利果实。"
    "球迷们在看台上打出巨幅标语，为即将到来的同城德比加油助威。"
    "下一轮联赛，球队将客场挑战积分榜领头羊，这场比赛将决定冠军的归属。"
    "俱乐部还宣布将投入更多资金建设青训基地，培养本土的足球人才。"
    "数据显示，球队本赛季的控球率位居联赛第二，射门次数排名第一。"
)


def test_near_duplicates_are_close_and_different_pages_far():
    original = simhash(tokenize(ARTICLE))
    edited = simhash(tokenize(ARTICLE + "（更新时间：2024年10月）"))
    other = simhash(tokenize("今天的菜谱是红烧肉，先把五花肉切块焯水，再加入冰糖炒出糖色。" * 4))
    assert (original ^ edited).bit_count() <= 3
    assert (original ^ other).bit_count() > 10


def test_simhash_is_stable_across_processes():
    code = "from topicspider.simhash import simhash; print(simhash(['足球', '比赛', 'goal']))"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1
    assert simhash(["足球", "比赛"]) == simhash(["比赛", "足球"])


def test_index_finds_every_fingerprint_within_distance():
    rng = random.Random(7)
    index = SimHashIndex(distance=3)
    stored = [rng.getrandbits(64) for _ in range(2000)]
    for fingerprint in stored:
        index.add(fingerprint)
    for fingerprint in stored[:200]:
        flipped = fingerprint
        for bit in rng.sample(range(64), 3):
            flipped ^= 1 << bit
        assert index.near(flipped) is not None
    far = stored[0] ^ sum(1 << bit for bit in range(0, 64, 8))
    assert index.near(far) in (None, *stored[1:])


def test_add_if_new_keeps_one_of_near_duplicates():
    index = SimHashIndex(distance=3)
    page = 0x9F3A_5C21_7E04_B6D8
    assert index.add_if_new(page)
    assert not index.add_if_new(page ^ 0b111)
    assert index.add_if_new(page ^ 0b1111)
    assert index.fingerprints == [page, page ^ 0b1111]
    assert index.blocks(page) == [0xB6D8, 0x7E04, 0x5C21, 0x9F3A]


def test_a_resumed_index_finds_the_paused_crawls_pages_within_the_distance_given_now():
    saved = SimHashIndex(distance=0)
    fingerprint = simhash(tokenize("国家队主场迎战对手 世界杯预选赛 关键比赛"))
    saved.add(fingerprint)
    alike = fingerprint ^ 0b101  # two bits apart
    assert saved.near(alike) is None
    resumed = SimHashIndex(distance=3)
    resumed.resume(saved)
    assert resumed.near(alike) == fingerprint
    same = SimHashIndex(distance=0)
    same.resume(saved)
    assert same.near(fingerprint) == fingerprint
    assert same.near(alike) is None
