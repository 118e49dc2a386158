"""The plan of the demo site: which pages exist, what they are called and how each is encoded.

The shape is what makes the site a test for a focused crawler: the on-topic sections (football,
Chinese and English) hang off an off-topic hub, and the encodings vary from honest UTF-8 to GBK
bytes that declare nothing, or UTF-8 bytes served under a header that claims GBK.
"""

# Chinese prose uses full-width punctuation on purpose.

from __future__ import annotations

from dataclasses import dataclass

from demo import corpus
from demo.corpus import Topic

SEED = "/index.html"
HUB = "/hub.html"
PRIVATE = "/private/transfer-budget.html"
OFFSITE_URLS = ("http://example.invalid/partners", "http://example.invalid/football/live")

#: How a page carries its encoding: (codec of the bytes, tag in <head>, Content-Type header).
#: A header of None means the server's default, ``text/html`` without a charset.
CHARSETS: dict[str, tuple[str, str, str | None]] = {
    "utf-8": ("utf-8", '<meta charset="utf-8">', None),
    "utf-8/header": ("utf-8", '<meta charset="utf-8">', "text/html; charset=utf-8"),
    "utf-8/bare": ("utf-8", "", None),
    # Hostile: UTF-8 bytes, honest <meta>, but the server claims GBK.
    "utf-8/gbk-header": ("utf-8", '<meta charset="utf-8">', "text/html; charset=gbk"),
    "gbk": ("gbk", '<meta charset="gbk">', None),
    "gbk/http-equiv": (
        "gbk",
        '<meta http-equiv="Content-Type" content="text/html; charset=GBK">',
        None,
    ),
    "gbk/header": ("gbk", "", "text/html; charset=gbk"),
    # Hostile: GBK bytes, no <meta>, and a header without a charset.
    "gbk/bare": ("gbk", "", "text/html"),
    "gb2312": ("gb2312", '<meta charset="gb2312">', None),
    "gb2312/http-equiv": (
        "gb2312",
        '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">',
        None,
    ),
}
WRONG_HEADER_CHARSETS = frozenset({"utf-8/gbk-header"})


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    #: What the article does, written to follow "本文" / "This article"; link sentences reuse it.
    blurb: str
    charset: str = "utf-8"
    #: Raw HTML appended to the body, for the odd links (off-site, fragments, images).
    extra: str = ""
    #: Live in a sub-folder and declare ``<base href>`` pointing back at the section folder.
    nested_with_base: bool = False


@dataclass(frozen=True)
class Section:
    folder: str
    topic: Topic
    label: str
    title: str
    intro: str
    note: str
    articles: tuple[Article, ...]
    #: Shown under every article, as news sites do; they also name the subject plainly.
    tags: tuple[str, ...] = ()
    on_topic: bool = False
    extra: str = ""

    @property
    def index(self) -> str:
        return self.folder + "index.html"

    @property
    def lang(self) -> str:
        return self.topic.lang


SECTIONS: tuple[Section, ...] = (
    Section(
        "/sports/",
        corpus.SPORTS,
        "体育",
        "体育频道：足球新闻与赛事",
        "体育频道每天报道足球联赛、杯赛和国家队的比赛消息，也关注球员和教练背后的故事。",
        "足球比赛新闻与评论",
        (
            Article(
                "round10-review.html",
                "联赛第十轮比赛回顾：江城雄狮主场逆转",
                "回顾了江城雄狮主场三比一逆转海滨联的全过程",
                "gbk",
            ),
            Article(
                "derby-preview.html",
                "同城德比前瞻：两支球队谁能笑到最后",
                "分析了德比大战前两支球队的伤病情况和首发阵容",
            ),
            Article(
                "top-scorer.html",
                "射手榜领跑者的进球秘诀",
                "讲述了本赛季联赛最佳射手的训练习惯和射门技巧",
                "gbk",
            ),
            Article(
                "coach-interview.html",
                "专访主教练：球队的目标是冲击联赛冠军",
                "记录了主教练对新赛季战术安排和年轻球员的看法",
            ),
            Article(
                "world-cup-qualifier.html",
                "世界杯预选赛国家队大名单公布",
                "介绍了国家队为世界杯预选赛征召的球员名单和教练组的考虑",
                "gb2312/http-equiv",
            ),
            Article(
                "youth-academy.html",
                "青训营里走出的足球新星",
                "讲述了几位从俱乐部青训营成长起来的年轻球员",
            ),
            Article(
                "transfer-window.html",
                "冬季转会窗口：各队引援动态汇总",
                "汇总了联赛各支球队在转会窗口的签约和离队情况",
            ),
            Article(
                "goalkeeper.html",
                "门将的扑救艺术",
                "解析了优秀门将面对点球和近距离射门时的扑救技巧",
            ),
            Article(
                "cup-final.html",
                "足协杯决赛：加时赛绝杀夺冠",
                "记录了足协杯决赛加时赛最后时刻的绝杀进球",
                "gbk/header",
                extra="<p>错过了直播？可以到合作网站"
                f'<a href="{OFFSITE_URLS[1]}">观看足球比赛录像</a>。</p>',
            ),
            Article(
                "fans-culture.html",
                "看台上的球迷文化",
                "描写了主场球迷的助威歌曲和看台上的热烈气氛",
                "gbk/bare",
            ),
            Article(
                "tactics.html",
                "四后卫还是三中卫：现代足球战术浅析",
                "比较了现代足球比赛中常见的几种阵型和战术",
                "utf-8/gbk-header",
                extra='<p>欢迎到<a href="round10-review.html#comments">第十轮比赛回顾的'
                "球迷评论区</a>一起讨论战术。</p>",
            ),
            Article(
                "champions-league.html",
                "欧冠小组赛抽签结果出炉",
                "梳理了欧冠小组赛的分组情况和各组的出线形势",
            ),
            Article(
                "season-stats.html",
                "赛季数据盘点：控球率与射门次数",
                "用数据盘点了本赛季联赛各支球队的控球率和射门次数",
            ),
        ),
        tags=("足球", "比赛", "联赛", "球队"),
        on_topic=True,
        extra='<p>下载本赛季<a href="/files/schedule.pdf">联赛赛程表（PDF）</a>，方便安排看球时间。'
        '</p>\n<p>英文读者请访问<a href="/en/football/index.html">英文足球频道</a>，'
        "那里有比赛报道和球员专访。</p>",
    ),
    Section(
        "/cooking/",
        corpus.COOKING,
        "美食",
        "美食频道：家常菜谱与烹饪技巧",
        "美食频道收集了简单易学的家常菜谱，从选料、刀工到火候，一步一步教你做好每一道菜。",
        "家常菜谱与烹饪技巧",
        (
            Article(
                "hongshaorou.html",
                "红烧肉的家常做法",
                "一步步介绍了肥而不腻的红烧肉怎样焯水、炒糖色和慢炖",
            ),
            Article(
                "mapo-tofu.html",
                "麻婆豆腐：麻辣鲜香的川菜经典",
                "讲解了麻婆豆腐的选料、火候和勾芡技巧",
                "gbk",
            ),
            Article(
                "steamed-fish.html",
                "清蒸鲈鱼怎样做才不腥",
                "分享了清蒸鲈鱼去腥和掌握蒸制时间的方法",
            ),
            Article(
                "tomato-egg.html",
                "西红柿炒鸡蛋的三个小窍门",
                "总结了把西红柿炒鸡蛋做得又香又嫩的三个窍门",
            ),
            Article(
                "dumplings.html",
                "冬至包饺子：饺子馅的调法",
                "介绍了猪肉白菜馅和韭菜鸡蛋馅的调制方法",
                "gb2312",
                extra='<p><a href="/images/dumplings.jpg">点击查看饺子成品图</a>。</p>',
            ),
            Article("noodles.html", "葱油拌面十分钟上桌", "教你用十分钟做出一碗香气扑鼻的葱油拌面"),
            Article("breakfast.html", "一周早餐菜谱推荐", "推荐了七种简单快手又有营养的家常早餐"),
        ),
        tags=("菜谱", "烹饪", "家常菜"),
    ),
    Section(
        "/travel/",
        corpus.TRAVEL,
        "旅游",
        "旅游频道：国内旅行攻略",
        "旅游频道分享国内热门景点的游玩路线、住宿建议和地道小吃，帮你把每一次出行安排得轻松愉快。",
        "国内旅行攻略与景点推荐",
        (
            Article(
                "west-lake.html", "杭州西湖一日游路线", "规划了从断桥到雷峰塔的西湖一日游步行路线"
            ),
            Article(
                "lijiang.html",
                "丽江古城的慢时光",
                "记录了在丽江古城住民宿、逛小巷的悠闲日子",
                "gbk/http-equiv",
            ),
            Article(
                "guilin.html",
                "桂林山水甲天下：漓江竹筏之旅",
                "介绍了漓江竹筏的乘坐方式和沿途最美的几段风景",
            ),
            Article(
                "xian-food.html",
                "西安回民街小吃地图",
                "整理了回民街上肉夹馍、凉皮和羊肉泡馍的老字号",
            ),
            Article("huangshan.html", "黄山看日出攻略", "分享了登黄山看日出的时间安排和住宿建议"),
            Article(
                "2024/autumn-leaves.html",
                "秋季出游计划：去哪里看红叶",
                "推荐了几处适合秋天赏红叶的好地方",
                nested_with_base=True,
            ),
        ),
        tags=("旅游", "攻略", "景点"),
    ),
    Section(
        "/finance/",
        corpus.FINANCE,
        "理财",
        "理财频道：股票、基金与家庭理财",
        "理财频道用通俗的语言解读股票市场、基金和家庭理财，帮助普通人管好自己的钱袋子。",
        "股票、基金与家庭理财",
        (
            Article(
                "index-fund.html", "指数基金定投入门", "解释了指数基金定投为什么适合普通上班族"
            ),
            Article(
                "stock-market.html",
                "今日股市：沪深两市小幅上涨",
                "报道了今天股票市场的走势和表现活跃的板块",
            ),
            Article(
                "savings.html",
                "存款利率下调后钱该放哪",
                "比较了定期存款、国债和货币基金的收益与风险",
                "gbk/bare",
            ),
            Article("bonds.html", "债券基金的稳健之道", "介绍了债券基金在家庭资产配置中的作用"),
            Article(
                "family-budget.html",
                "家庭理财：先做好记账和预算",
                "讲解了家庭记账和制定月度预算的方法",
            ),
            Article(
                "financial-report.html",
                "读懂上市公司财务报表",
                "教你看懂利润表、资产负债表和现金流量表",
            ),
        ),
        tags=("理财", "股票", "基金"),
    ),
    Section(
        "/en/football/",
        corpus.FOOTBALL,
        "Football",
        "Football: matches, leagues and tournaments",
        "Our football desk covers league matches, cup ties and international tournaments, "
        "with reports, player profiles and tactics.",
        "match reports and tactics",
        (
            Article(
                "match-report.html",
                "Match report: Riverside United 3-1 Harbor City",
                "looks back at a comeback win decided by two late goals",
                "utf-8/header",
            ),
            Article(
                "league-table.html",
                "League table: the title race tightens",
                "explains how four clubs sit within three points at the top of the league",
            ),
            Article(
                "goal-of-the-month.html",
                "Goal of the month: a volley from thirty yards",
                "breaks down the best goal scored in the league this month",
            ),
            Article(
                "player-profile.html",
                "Player profile: the striker who never stops running",
                "profiles the league's top scorer and his training routine",
            ),
            Article(
                "coach-tactics.html",
                "The coach's view: why a back three works",
                "explains why the coach switched to a three-man defence",
            ),
        ),
        tags=("football", "soccer", "league"),
        on_topic=True,
        extra='<p>Chinese readers: <a href="/sports/index.html">体育频道的足球新闻</a>.</p>',
    ),
    Section(
        "/en/gardening/",
        corpus.GARDENING,
        "Gardening",
        "Gardening: grow your own",
        "The gardening pages are for anyone with a balcony, a yard or a small allotment.",
        "seasonal jobs and growing guides",
        (
            Article(
                "tomatoes.html",
                "Growing tomatoes on a balcony",
                "explains how to raise a good crop of tomatoes in pots",
            ),
            Article(
                "compost.html",
                "Compost from kitchen scraps",
                "shows how to turn peelings and leaves into rich compost",
                "utf-8/bare",
            ),
        ),
        tags=("gardening", "vegetables", "compost"),
    ),
    Section(
        "/en/cooking/",
        corpus.KITCHEN,
        "Cooking",
        "Cooking: simple food at home",
        "Simple recipes for weeknights and slow weekends, all tested in an ordinary kitchen.",
        "weeknight recipes and baking",
        (
            Article(
                "bread.html",
                "A simple no-knead bread",
                "walks through a loaf that needs only flour, water, salt and time",
            ),
            Article(
                "soup.html",
                "Winter vegetable soup",
                "makes a thick, warming soup from whatever roots are in season",
            ),
        ),
        tags=("recipes", "cooking", "baking"),
    ),
)
