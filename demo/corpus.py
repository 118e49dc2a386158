"""Wording for the demo site: sentence templates and word lists, one set per topic.

Pages are assembled from these so that every page reads differently yet stays on its subject.
All of it was written for this project; people, clubs and figures are invented.
"""

# Chinese prose uses full-width punctuation on purpose.

from __future__ import annotations

import random
import string
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Topic:
    """How to write about one subject: templates with ``{slot}`` fields and what fills them.

    A slot names a word list or a number range. A trailing digit (``{team2}``) asks for another
    value from the same list, different from those already used in the sentence, so a club never
    plays itself.
    """

    lang: str
    templates: tuple[str, ...]
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    numbers: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def sentences(self, rng: random.Random, count: int) -> list[str]:
        """``count`` filled-in sentences from distinct templates (fewer if there are fewer)."""
        chosen = rng.sample(self.templates, min(count, len(self.templates)))
        return [self.fill(template, rng) for template in chosen]

    def fill(self, template: str, rng: random.Random) -> str:
        values: dict[str, str] = {}
        for _, name, _, _ in string.Formatter().parse(template):
            if not name or name in values:
                continue
            kind = name.rstrip(string.digits)
            if kind in self.numbers:
                values[name] = str(rng.randint(*self.numbers[kind]))
                continue
            taken = {v for k, v in values.items() if k.rstrip(string.digits) == kind}
            values[name] = rng.choice([w for w in self.words[kind] if w not in taken])
        return template.format(**values)


#: Sentences that carry an in-text link: ``{a}`` is the anchor, ``{blurb}`` describes the target.
LINK_TEMPLATES: dict[str, tuple[str, ...]] = {
    "zh": (
        "延伸阅读：{a}，这篇文章{blurb}。",
        "想了解更多，可以看看{a}，文中{blurb}。",
        "另一篇文章《{a}》{blurb}，也值得一读。",
        "推荐阅读{a}：{blurb}。",
        "如果你对这个话题感兴趣，不妨读一读{a}，它{blurb}。",
    ),
    "en": (
        "Read {a}, which {blurb}.",
        "See also {a} — it {blurb}.",
        "Our earlier piece, {a}, {blurb}.",
        "If you want more, {a} {blurb}.",
    ),
}

#: The first sentence of an article, built from its own blurb.
LEADS: dict[str, str] = {"zh": "本文{blurb}。", "en": "This article {blurb}."}

SPORTS = Topic(
    lang="zh",
    templates=(
        "{team}在{league}第{round}轮比赛中以{win}比{lose}战胜{team2}，{player}打入了制胜进球。",
        "上半场第{minute}分钟，{player}在禁区外一脚远射破门，帮助球队取得领先。",
        "主教练{coach}赛后表示，球队的整体表现令人满意，但防守端仍有提升空间。",
        "本赛季{team}已经取得{wins}场胜利，目前在联赛积分榜上排名第{rank}位。",
        "{player}本场比赛完成{shots}次射门，其中{on}次射正，是全队最活跃的球员。",
        "现场{crowd}万名球迷为{team}加油助威，看台上的歌声一直持续到比赛结束。",
        "世界杯预选赛临近，国家队教练组正在密切关注{player}的竞技状态。",
        "{team}的青训体系近年来培养了多名年轻球员，{player}已经成为球队的主力前锋。",
        "比赛下半场，{team2}加强了边路进攻，但始终未能攻破对方的球门。",
        "数据显示，{team}本赛季场均控球率达到{pct}%，传球成功率位居联赛前列。",
        "{coach}在训练中特别强调定位球战术，球队在角球和任意球上的进球明显增多。",
        "体育评论员认为，这场比赛的结果将直接影响{league}的冠军归属。",
        "伤愈复出的{player}在第{minute}分钟替补登场，很快就送出了一次精彩助攻。",
        "赛前新闻发布会上，{coach}透露球队将继续采用四后卫阵型。",
        "门将{keeper}全场做出{saves}次关键扑救，被评为本场比赛的最佳球员。",
        "转会窗口开启后，已经有多支球队对{player}表现出浓厚兴趣。",
        "{team}和{team2}的上一次交锋发生在上赛季的{league}，那场比赛双方战成平局。",
        "终场哨声响起，{team}的球员们冲向看台，与球迷一起庆祝这场来之不易的胜利。",
        "足球专家指出，{team}的中场控制力是他们本赛季最大的进步。",
        "{player}赛后接受采访时说，进球属于全队，每一名队友都付出了努力。",
        "下一轮联赛，{team}将客场挑战{team2}，比赛将在周六晚上七点半开球。",
        "这是{player}本赛季的第{goals}个联赛进球，他在射手榜上的排名也升到了第{rank}位。",
    ),
    words={
        "team": ("江城雄狮", "海滨联", "北岭竞技", "蓉城飞鹰", "南湖队", "西山城", "金陵体育"),
        "player": ("李明轩", "王浩然", "陈子豪", "刘一鸣", "赵思远", "孙嘉伟", "周天宇", "吴俊杰"),
        "keeper": ("郑国强", "何晓东", "黄立新"),
        "coach": ("马国栋", "林志刚", "徐卫东", "高建华"),
        "league": ("中超联赛", "英超联赛", "甲级联赛", "足协杯", "亚冠联赛", "欧冠联赛"),
    },
    numbers={
        "round": (1, 30),
        "win": (2, 4),
        "lose": (0, 1),
        "minute": (5, 88),
        "wins": (3, 18),
        "rank": (1, 8),
        "shots": (3, 9),
        "on": (1, 3),
        "crowd": (2, 6),
        "pct": (48, 64),
        "saves": (3, 9),
        "goals": (5, 21),
    },
)

COOKING = Topic(
    lang="zh",
    templates=(
        "做{dish}之前，先把{ingredient}和{ingredient2}准备好，这样下锅时才不会手忙脚乱。",
        "{meat}切块后冷水下锅焯水，撇去浮沫，再捞出用温水冲洗干净。",
        "锅中倒入少许油，放入{aromatic}和{aromatic2}爆香，再加入主料翻炒均匀。",
        "加入一勺{sauce}和半勺{sauce2}，盖上锅盖，转小火慢炖{minutes}分钟。",
        "最后开大火收汁，撒上一把葱花，一道家常的{dish}就完成了。",
        "很多人做{dish}时喜欢多放{sauce}，其实适量就好，放多了会盖住食材本身的鲜味。",
        "这份菜谱适合{people}人食用，从准备到出锅大约需要{minutes}分钟。",
        "如果家里没有{ingredient}，也可以用{ingredient2}代替，味道同样不错。",
        "烹饪的关键在于火候，{method}这一步千万不要着急。",
        "{dish}是一道经典的{cuisine}，咸鲜适口，老人和孩子都爱吃。",
        "腌制{meat}时加入少许淀粉和蛋清，炒出来的口感会更加嫩滑。",
        "厨房新手可以先从{dish}学起，步骤简单，失败率也低。",
        "买{ingredient}时要挑新鲜的，颜色自然、闻起来没有异味的最好。",
        "炒糖色时要用小火，看到糖液变成枣红色并冒起小泡，就可以马上下{meat}。",
        "吃不完的{dish}可以放进冰箱冷藏，第二天加热后味道依然很好。",
        "调味时先少放盐，出锅前尝一尝再决定是否需要补一点。",
        "用{oil}炒菜香味更足，但要注意油温不要过高。",
        "这道{dish}搭配一碗白米饭，就是一顿简单又满足的晚餐。",
    ),
    words={
        "dish": (
            "红烧肉",
            "宫保鸡丁",
            "麻婆豆腐",
            "清蒸鲈鱼",
            "西红柿炒鸡蛋",
            "酸辣土豆丝",
            "糖醋排骨",
            "葱油拌面",
            "鱼香肉丝",
            "白菜猪肉饺子",
        ),
        "ingredient": (
            "五花肉",
            "鸡胸肉",
            "嫩豆腐",
            "鲈鱼",
            "土豆",
            "西红柿",
            "鸡蛋",
            "大白菜",
            "香菇",
        ),
        "meat": ("五花肉", "排骨", "鸡腿肉", "牛肉", "里脊肉"),
        "aromatic": ("姜片", "蒜末", "葱段", "干辣椒", "花椒", "八角"),
        "sauce": ("生抽", "老抽", "料酒", "香醋", "蚝油", "豆瓣酱"),
        "method": ("焯水", "煸炒", "小火慢炖", "大火收汁", "腌制"),
        "cuisine": ("川菜", "家常菜", "鲁菜", "粤菜", "江南小菜"),
        "oil": ("菜籽油", "花生油", "猪油"),
    },
    numbers={"minutes": (10, 60), "people": (2, 4)},
)

TRAVEL = Topic(
    lang="zh",
    templates=(
        "{place}最适合在{season}前往，气候宜人，游客也相对较少。",
        "从市区出发，乘坐{transport}大约{minutes}分钟就能到达景区入口。",
        "景区门票{price}元，在网上提前预约可以节省不少排队时间。",
        "傍晚时分沿着{place}的步道慢慢走，可以看到非常漂亮的晚霞。",
        "当地的{snack}是必尝的小吃，街边小店的味道往往比大饭店更地道。",
        "建议在{place}附近选一家民宿，老板通常会热情地推荐游玩路线。",
        "如果时间充裕，可以安排{days}天的行程，把周边的古镇也一起逛完。",
        "旅游旺季人流量很大，出门记得带好身份证、雨伞和充电宝。",
        "{place}附近的博物馆免费开放，里面收藏了大量珍贵的历史文物。",
        "常年在外的背包客说，旅行的意义不只在于目的地，更在于沿途的风景。",
        "清晨登上山顶看日出，是很多游客专程来{place}的原因。",
        "{season}的{place}游人如织，拍照最好避开中午最热闹的时段。",
        "租一辆自行车环游{place}，既能锻炼身体，又能发现许多小众景点。",
        "回程前别忘了去市场买些{souvenir}，带给家人朋友当作伴手礼。",
        "{place}的住宿价格在节假日会上涨{pct}%左右，最好提前一周订房。",
        "导游介绍说，这条古街已经有{age}多年的历史，两旁的老房子保存得很完整。",
        "乘坐{transport}出行时，靠窗的座位可以欣赏一路的田园风光。",
    ),
    words={
        "place": (
            "杭州西湖",
            "桂林漓江",
            "丽江古城",
            "成都宽窄巷子",
            "西安古城墙",
            "厦门鼓浪屿",
            "黄山",
            "青岛栈桥",
            "苏州园林",
        ),
        "season": ("春天", "初夏", "秋天", "深秋", "冬季"),
        "transport": ("地铁", "高铁", "旅游大巴", "公交车", "出租车"),
        "snack": ("肉夹馍", "凉皮", "糖油粑粑", "米粉", "沙茶面", "桂花糕"),
        "souvenir": ("丝绸围巾", "龙井茶", "扎染布", "桂花糕", "紫砂壶"),
        "age": ("三百", "四百", "六百", "八百"),
    },
    numbers={"minutes": (15, 90), "price": (40, 230), "days": (2, 6), "pct": (20, 50)},
)

FINANCE = Topic(
    lang="zh",
    templates=(
        "今天沪深两市小幅{move}，{sector}板块表现活跃，全天成交额超过{amount}亿元。",
        "对于普通投资者来说，{product}是一种风险相对较低的理财方式。",
        "分析师指出，{sector}行业的估值已经回到历史中位数附近。",
        "基金定投的核心是坚持，每月固定投入{money}元，长期下来可以摊薄持仓成本。",
        "买股票之前要先读懂公司的财务报表，尤其要关注现金流和资产负债率。",
        "银行最近下调了{term}定期存款利率，不少储户开始寻找其他的理财渠道。",
        "理财规划师建议，家庭资产中应该预留{months}个月的生活费作为应急资金。",
        "{sector}行业的龙头公司发布季度财报，净利润同比增长{pct}%。",
        "市场波动加大的时候，分散投资可以有效降低投资组合的整体风险。",
        "债券基金的收益虽然不高，但净值波动小，适合作为资产配置中的压舱石。",
        "刚开始理财的年轻人，可以先从{product}入手，再慢慢了解其他产品。",
        "记账是理财的第一步，坚持记录{months}个月，就能看清钱都花在了哪里。",
        "有经验的投资者提醒，不要把全部积蓄投入单一的{product}。",
        "{product}的年化收益率目前大约在{rate}左右，和去年相比略有下降。",
        "市盈率只是参考指标之一，判断一家公司是否值得投资还要看它的成长性。",
        "信用卡分期看似轻松，实际的年化利率往往远高于表面数字。",
        "央行公布的数据显示，上个月居民存款增加了{amount}亿元。",
    ),
    words={
        "move": ("上涨", "下跌", "震荡", "回升"),
        "sector": ("新能源", "消费", "医药", "半导体", "银行", "家电"),
        "product": ("货币基金", "指数基金", "国债", "银行理财产品", "债券基金", "大额存单"),
        "term": ("一年期", "三年期", "五年期"),
        "rate": ("1.8%", "2.1%", "2.5%", "3.2%"),
    },
    numbers={"amount": (3000, 9800), "money": (500, 3000), "months": (3, 12), "pct": (8, 45)},
)

PORTAL = Topic(
    lang="zh",
    templates=(
        "生活网每天为读者精选美食、旅行和理财方面的实用内容。",
        "编辑部的{editors}位编辑来自不同城市，他们会把身边的好去处和好味道分享给你。",
        "如果你有好的建议，欢迎通过页面底部的邮箱联系我们。",
        "我们的文章都由编辑亲自撰写和核对，转载请注明出处。",
        "本站内容仅供参考，具体信息请以官方发布为准。",
        "每周五我们会更新一期专题，介绍当季的生活小窍门。",
        "网站改版后，频道页面加载更快，在手机上阅读也更加方便。",
        "订阅我们的周刊，就能第一时间收到最新的菜谱和旅行攻略。",
    ),
    numbers={"editors": (6, 15)},
)

FOOTBALL = Topic(
    lang="en",
    templates=(
        "{team} beat {team2} {win}-{lose} in round {round} of the {league}, "
        "and {player} scored the winning goal.",
        "After the match, coach {coach} said the squad had shown real character "
        "in the second half.",
        "{player} has now scored {goals} goals this season and leads the league's scoring chart.",
        "Fans packed the stadium for the derby, and the atmosphere was electric from kick-off.",
        "The tournament draw placed {team} in a group with two former champions.",
        "With the World Cup qualifiers approaching, the national coach is watching "
        "{player} closely.",
        "In the second half {team2} pressed high, but their striker could not find the target.",
        "The league table is tight at the top: only {points} points separate the first four clubs.",
        "{coach} has switched to a back three, and the defence looks far more solid.",
        "A late penalty earned {team} a draw in the cup, keeping their unbeaten run alive.",
        "Goalkeeper {keeper} made {saves} saves and was named player of the match.",
        "Football analysts rate the club's youth academy as one of the best in the country.",
        "{player} struck a volley from the edge of the box after {minute} minutes.",
        "The soccer season resumes on Saturday, when {team} travel to face {team2}.",
        "{team} kept the ball for {pct} per cent of the match but created few clear chances.",
        "The coach praised {player}, saying the young forward works harder than anyone "
        "in training.",
        "Supporters of {team} sang for the full ninety minutes, even when the team were "
        "a goal down.",
        "The semi-final of the tournament will be played at a neutral ground next month.",
    ),
    words={
        "team": (
            "Riverside United",
            "Northgate Rovers",
            "Harbor City",
            "Kingsbridge Athletic",
            "Westvale FC",
            "Eastfield Town",
        ),
        "player": (
            "Tom Avery",
            "Marco Rossi",
            "Daniel Okafor",
            "Liam Carter",
            "Jonas Berg",
            "Samuel Reyes",
        ),
        "keeper": ("Ben Walsh", "Pavel Novak"),
        "coach": ("Peter Hale", "Ana Duarte", "Martin Cole"),
        "league": ("Premier League", "Championship", "Champions League", "FA Cup"),
    },
    numbers={
        "round": (2, 30),
        "win": (2, 4),
        "lose": (0, 1),
        "goals": (6, 22),
        "points": (2, 5),
        "saves": (4, 9),
        "minute": (5, 88),
        "pct": (55, 68),
    },
)

GARDENING = Topic(
    lang="en",
    templates=(
        "Plant {plant} in early {season}, once the soil has warmed and the risk of frost "
        "has passed.",
        "Give the {plant} full sun and well-drained soil; the brightest corner of the garden "
        "suits them best.",
        "Water deeply once a week rather than a little every day; the roots will grow stronger.",
        "A layer of mulch keeps the soil moist and stops weeds from taking over the beds.",
        "Prune {shrub} after flowering to keep its shape compact and encourage new growth.",
        "Compost made from kitchen scraps and fallen leaves is the cheapest fertiliser "
        "you will find.",
        "If aphids appear on the {plant}, a spray of soapy water usually clears them within days.",
        "Raised beds warm up faster in spring and make weeding much easier on the back.",
        "Sow {veg} seeds about {cm} centimetres apart and thin the seedlings as they appear.",
        "Most herbs, such as {herb} and {herb2}, grow happily in pots on a sunny windowsill.",
        "Turn the compost heap every {weeks} weeks so that air reaches the middle.",
        "Tall plants need a sturdy cane once they pass {cm} centimetres in height.",
        "Collect rainwater in a butt; plants prefer it to hard tap water.",
        "In late {season}, cut back the perennials and leave the seed heads for the birds.",
        "Earthworms are a sign of healthy soil — the more you see, the better.",
    ),
    words={
        "plant": ("tomatoes", "sweet peas", "lavender", "sunflowers", "courgettes"),
        "shrub": ("the roses", "the hydrangea", "the lavender"),
        "veg": ("carrot", "lettuce", "radish", "beetroot", "spinach"),
        "herb": ("basil", "thyme", "rosemary", "parsley", "mint"),
        "season": ("spring", "summer", "autumn"),
    },
    numbers={"cm": (5, 30), "weeks": (2, 4)},
)

KITCHEN = Topic(
    lang="en",
    templates=(
        "Preheat the oven to {temp} degrees and line a baking tray with parchment paper.",
        "Chop the {veg} finely and soften it in butter over a low heat for {minutes} minutes.",
        "Season the {meat} generously with salt and pepper before it goes into the pan.",
        "A splash of {liquid} deglazes the pan and lifts all the flavour from the bottom.",
        "This recipe serves {people} and takes about {minutes} minutes from start to finish.",
        "Let the dough rest for at least an hour so the gluten can relax.",
        "Stir in the {herb} at the very end so it keeps its bright colour and fresh taste.",
        "Leftovers keep well in the fridge for {days} days and taste even better reheated.",
        "If you have no {veg}, {veg2} works just as well in this dish.",
        "Serve the {dish} with crusty bread and a simple green salad.",
        "Taste the sauce before serving and adjust the salt; a squeeze of lemon lifts it nicely.",
        "Weigh the flour rather than using cups — baking rewards precision.",
        "Roast the {veg} until the edges caramelise, turning it once halfway through.",
        "A heavy cast-iron pot holds the heat evenly, which matters for a slow {dish}.",
        "Toast the spices in a dry pan for a minute to wake up their aroma.",
    ),
    words={
        "veg": ("onion", "leek", "carrot", "celery", "butternut squash", "parsnip"),
        "meat": ("chicken thighs", "pork shoulder", "beef shin", "lamb"),
        "liquid": ("white wine", "stock", "cider"),
        "herb": ("parsley", "basil", "chives", "coriander"),
        "dish": ("stew", "soup", "casserole", "risotto"),
    },
    numbers={"temp": (180, 220), "minutes": (10, 45), "people": (2, 6), "days": (2, 4)},
)

PORTAL_EN = Topic(
    lang="en",
    templates=(
        "Life & Leisure publishes practical guides to cooking and gardening every week.",
        "Our editors test every recipe at home before it appears on the site.",
        "Send us your questions and we will answer the most common ones in a weekly column.",
        "The English edition is smaller than the Chinese one, but it grows every month.",
        "All articles are written by our own staff; please ask before you republish them.",
        "The newsletter goes out on Fridays with the best of the week's articles.",
    ),
)

#: Bylines: who "wrote" a page.
AUTHORS: dict[str, tuple[str, ...]] = {
    "zh": ("王晓", "李静", "张伟", "刘洋", "陈晨", "杨帆"),
    "en": ("Emma Hughes", "Oliver Grant", "Sophie Lane", "James Wren"),
}
