"""The small named multilingual corpus: news stories in Chinese, Japanese, Korean, Thai,
Arabic, Russian and German, each with planted near-copies, plus two Chinese and Japanese topic
sets for the browser test. Imported as ``from multilingual import ...`` (tests/ is on sys.path,
see tests/corpora.py).

The stories were written for these tests (no licence attached), in the plain style of wire news,
so the words searched for sit inside unspaced text or in inflected forms exactly as they do in
real text: ``日本队`` and ``股市`` inside runs of Chinese characters, ``東京`` and ``雨`` inside
Japanese sentences, ``서울`` inside ``서울에서`` (Korean particles attach to the noun), ``กรุงเทพ``
inside ``ที่กรุงเทพมหานครและปริมณฑล`` (Thai has no spaces between words), ``القاهرة`` as
``بالقاهرة`` ("in Cairo"), ``Москва`` as ``в Москве``, ``Zeitung`` as ``Zeitungen``.

Per language (keys ``<lang>-...``):

* ``story``: the original, long enough (about 300 characters of CJK or Thai, 100+ words
  elsewhere) that every sensible shingling keeps its copies above the default threshold 0.8;
* ``story-wire``: the same with a wire-service by-line in front and a footer at the end;
* ``story-fix``: the same with one character (CJK) or one word changed (a corrected figure);
* ``other``: a different story in the same language, which folds with nothing;

plus ``empty-zh`` and ``empty-ja``, documents with no word in them (punctuation only): they
must never fold, with each other or with anything. English is represented by the solar story of
tests/corpora.py (``en-story`` and its syndicated copy ``en-story-wire``).
"""
# ruff: noqa: E501, RUF001 - prose test data reads better unwrapped; CJK punctuation is the data

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from corpora import SOLAR_STORY, SYNDICATED_COPY

__all__ = [
    "CROSS_LANGUAGE_QUERIES",
    "JA_JAGUAR",
    "LANGUAGES",
    "MULTILINGUAL",
    "QUERIES",
    "ZH_APPLE",
    "MlDoc",
    "families",
    "write_jsonl",
]


@dataclass(frozen=True)
class MlDoc:
    key: str
    lang: str  # ISO 639-1
    title: str
    text: str
    copy_of: str | None = None  # the key of the original this is a planted near-copy of


LANGUAGES = ("zh", "ja", "ko", "th", "ar", "ru", "de")

# lang: (title, story, by-line, footer, (old, new) for the corrected copy, other title, other story)
_STORIES: dict[str, tuple[str, str, str, str, tuple[str, str], str, str]] = {
    "zh": (
        "中国国家队逆转日本队",
        "北京时间昨天晚上，中国国家队在世界杯亚洲区预选赛中以二比一战胜日本队，取得了小组赛的第三场胜利。比赛在杭州奥体中心体育场进行，现场有超过五万名球迷观战。上半场第二十三分钟，日本队利用角球机会首先破门，主队一度陷入被动。易边再战后，中国国家队加强了中场的逼抢，第五十八分钟由前锋头球扳平比分。第八十七分钟，替补登场的年轻球员在禁区外远射得手，帮助球队完成逆转。赛后主教练表示，球员们在逆境中展现了顽强的斗志，但防守端仍有不少需要改进的地方。对方主教练则认为，本队在下半场体能下降明显，错失了多次反击良机。根据赛程安排，中国国家队下个月将客场挑战澳大利亚队，这场比赛将直接影响小组出线形势。",
        "本报记者 李明 报道",
        "（完）",
        ("五万名", "六万名"),
        "股市本周震荡上行",
        "受海外市场回暖和政策利好消息提振，本周股市震荡上行，上证指数周五收盘报三千二百点，全周累计上涨百分之二点五。分析人士指出，近期公布的经济数据好于预期，制造业采购经理指数重回扩张区间，增强了投资者对经济复苏的信心。从板块来看，新能源汽车、半导体和医药等行业表现活跃，银行和保险板块则相对平稳。北向资金本周净流入超过一百亿元，显示外资配置意愿有所提升。不过也有专家提醒，当前成交量仍然偏低，短期内可能继续维持震荡格局，投资者应注意控制仓位，避免盲目追高。",
    ),
    "ja": (
        "東京で今夜から強い雨",
        "気象庁によりますと、前線を伴った低気圧が日本の南の海上を東に進んでいる影響で、東京都内では今夜遅くから明日の朝にかけて雨が強く降る見込みです。多いところでは一時間に三十ミリ以上の激しい雨が降るおそれがあり、低い土地の浸水や川の増水に十分な注意が必要です。また、関東地方の沿岸部では南寄りの風が強まり、海上は波が高くなる見通しです。東京の明日の最高気温は十八度と、きょうより五度ほど低くなる予想で、雨は夕方までには止む見込みです。気象庁は、通勤や通学の時間帯に交通機関が乱れる可能性があるとして、最新の気象情報を確認するよう呼びかけています。週末は高気圧に覆われて晴れる日が多く、行楽日和となりそうです。",
        "【共同通信】",
        "（記者：山田太郎）",
        ("三十ミリ", "四十ミリ"),
        "新幹線に新型車両",
        "ＪＲ東海は、東海道新幹線の新しい車両を来年春から営業運転に投入すると発表しました。新しい車両は座席の幅を広げたほか、すべての座席にコンセントを設け、車内の無線通信も高速化されます。また、地震の揺れを早く感知して自動的に減速する装置の性能も向上し、安全性が一段と高まるということです。同社によりますと、製造費は一編成あたりおよそ五十億円で、今後三年間で四十編成を順次置き換える計画です。鉄道ファンの間では先頭車両の形が話題となっており、発表会場には多くの報道陣が詰めかけました。",
    ),
    "ko": (
        "서울시, 내년부터 저상버스로 교체",
        "서울시는 내년부터 시내버스 전 노선에 저상버스를 도입하겠다고 20일 밝혔다. 서울에서 운행 중인 시내버스는 모두 칠천여 대로, 이 가운데 절반가량이 이미 저상버스로 바뀌었다. 시는 남은 차량을 단계적으로 교체해 휠체어 이용자와 유모차를 끄는 시민, 노약자가 더 편리하게 버스를 탈 수 있도록 할 계획이다. 또한 정류장 안내 화면에 실시간 혼잡도 정보를 표시하고, 심야 시간대에는 배차 간격을 줄여 시민들의 귀갓길 불편을 덜기로 했다. 시 관계자는 교통 약자의 이동권을 보장하는 것이 대중교통 정책의 가장 중요한 목표라며, 버스 회사와 협의해 예산을 차질 없이 마련하겠다고 말했다. 시민단체들은 이번 결정을 환영하면서도 지하철역 엘리베이터 설치도 서둘러야 한다고 지적했다.",
        "연합뉴스 김민수 기자 =",
        "무단 전재 및 재배포 금지",
        ("칠천여", "팔천여"),
        "제주 찾은 외국인 관광객이 두 배로",
        "제주도를 찾은 외국인 관광객이 올해 들어 크게 늘었다. 제주관광공사에 따르면 지난달 제주를 방문한 외국인은 약 십오만 명으로 작년 같은 달보다 두 배 가까이 증가했다. 특히 중국과 일본, 대만에서 온 단체 관광객이 많았으며, 한라산 등반과 올레길 걷기가 인기 프로그램으로 꼽혔다. 관광업계는 항공 노선이 늘어나고 크루즈 입항이 재개된 덕분이라고 분석했다. 다만 일부 관광지에서는 쓰레기 문제와 교통 혼잡이 심해지고 있어 대책이 필요하다는 목소리도 나온다.",
    ),
    "th": (
        "เตือนฝนตกหนักกรุงเทพฯ",
        "กรมอุตุนิยมวิทยาประกาศเตือนว่าในช่วงสามวันข้างหน้าจะมีฝนตกหนักในหลายพื้นที่ของประเทศไทย โดยเฉพาะที่กรุงเทพมหานครและปริมณฑล ซึ่งอาจมีฝนตกหนักถึงหนักมากในช่วงเย็นและกลางคืน ประชาชนที่อาศัยอยู่ในพื้นที่ลุ่มต่ำควรติดตามข่าวสารอย่างใกล้ชิดและเตรียมขนย้ายสิ่งของขึ้นที่สูง สำนักการระบายน้ำได้เตรียมเครื่องสูบน้ำกว่าสองร้อยเครื่องไว้ตามจุดเสี่ยงน้ำท่วม และเจ้าหน้าที่จะประจำการตลอดยี่สิบสี่ชั่วโมง นอกจากนี้ผู้ขับขี่รถยนต์ควรลดความเร็วและเว้นระยะห่างจากรถคันหน้าเมื่อถนนลื่น การรถไฟฟ้าระบุว่าจะเพิ่มจำนวนขบวนในช่วงเวลาเร่งด่วนเพื่อรองรับผู้โดยสารที่เปลี่ยนมาใช้บริการ",
        "ผู้สื่อข่าวรายงานว่า",
        "ที่มา: สำนักข่าวไทย",
        ("สองร้อยเครื่อง", "สามร้อยเครื่อง"),
        "ส่งออกข้าวไทยเพิ่มขึ้น",
        "กระทรวงพาณิชย์เปิดเผยว่าการส่งออกข้าวของไทยในช่วงหกเดือนแรกของปีนี้มีปริมาณเพิ่มขึ้นร้อยละสิบสองเมื่อเทียบกับช่วงเดียวกันของปีที่แล้ว ตลาดสำคัญได้แก่ฟิลิปปินส์ อินโดนีเซีย และแอฟริกาใต้ ผู้ส่งออกคาดว่าราคาข้าวหอมมะลิจะยังคงอยู่ในระดับสูง เนื่องจากผลผลิตในประเทศคู่แข่งลดลงจากภัยแล้ง อย่างไรก็ตามเกษตรกรบางส่วนยังกังวลเรื่องต้นทุนปุ๋ยและค่าขนส่งที่เพิ่มสูงขึ้น",
    ),
    "ar": (
        "افتتاح معرض الكتاب الدولي",
        "افتتحت وزارة الثقافة مساء أمس معرض الكتاب الدولي بالقاهرة بمشاركة أكثر من ألف دار نشر من خمسين دولة. ويستمر المعرض أسبوعين، ويضم ندوات فكرية وأمسيات شعرية وورش عمل للأطفال والشباب. وقال رئيس الهيئة العامة للكتاب إن الإقبال في اليوم الأول فاق التوقعات، إذ تجاوز عدد الزوار مئة ألف زائر. وتحل اليونان ضيف شرف على دورة هذا العام، حيث يقدم جناحها مختارات من الأدب اليوناني المترجم إلى العربية. كما خصصت إدارة المعرض قاعة كبيرة للكتب الرقمية والمسموعة، استجابة لاهتمام القراء الشباب بالوسائط الحديثة. ويطالب عدد من الناشرين بخفض أسعار الورق والطباعة، مؤكدين أن ارتفاع التكاليف يهدد صناعة النشر في المنطقة.",
        "دبي (رويترز) -",
        "جميع الحقوق محفوظة",
        ("خمسين دولة", "ستين دولة"),
        "بدء موسم حصاد التمور",
        "بدأ موسم حصاد التمور في واحات المملكة، وتوقعت وزارة البيئة والمياه والزراعة أن يتجاوز الإنتاج هذا العام مليوني طن. ويعمل آلاف المزارعين في قطف الثمار وفرزها وتعبئتها قبل نقلها إلى الأسواق المحلية ومراكز التصدير. وأشار خبراء إلى أن استخدام أنظمة الري الحديثة ساعد على رفع جودة المحصول وتقليل استهلاك المياه. ومن المنتظر أن تقام مهرجانات التمور في عدة مدن خلال الأسابيع المقبلة لعرض الأصناف المختلفة وتشجيع المنتجين الصغار.",
    ),
    "ru": (
        "Фестиваль уличного театра",
        "В Москве в субботу открылся международный фестиваль уличного театра, который продлится до конца месяца. Спектакли пройдут в парках, на площадях и во дворах старых домов, а вход на все представления будет бесплатным. Организаторы ожидают, что за время фестиваля его посетят более трёхсот тысяч зрителей. В программе участвуют труппы из двенадцати стран, в том числе из Франции, Испании и Японии. Особое внимание уделено детским спектаклям: для самых маленьких зрителей подготовлены кукольные представления и мастер-классы. По словам директора фестиваля, главная задача проекта состоит в том, чтобы приблизить искусство к людям и сделать город более живым. В случае дождя часть спектаклей перенесут в крытые павильоны.",
        "ТАСС.",
        "Перепечатка без ссылки запрещена.",
        ("двенадцати стран", "пятнадцати стран"),
        "Экспедиция на Байкал",
        "Учёные Иркутского университета завершили летнюю экспедицию на озеро Байкал. Исследователи измерили температуру воды на разных глубинах, собрали пробы планктона и установили новые датчики для наблюдения за состоянием льда зимой. По их данным, прозрачность воды в южной части озера за последние десять лет немного снизилась. Результаты экспедиции будут опубликованы в научном журнале в начале следующего года.",
    ),
    "de": (
        "Hamburger Verlage drucken gemeinsam",
        "Die großen Zeitungen in Hamburg wollen ihre Druckerei im Stadtteil Wandsbek gemeinsam betreiben, um Kosten zu sparen. Nach Angaben der Verlage sinken die Auflagen seit Jahren, während die Preise für Papier und Energie deutlich gestiegen sind. Künftig sollen die Morgenausgaben beider Häuser auf denselben Maschinen gedruckt werden, die Redaktionen bleiben jedoch unabhängig voneinander. Die Gewerkschaft befürchtet den Verlust von rund achtzig Arbeitsplätzen und fordert einen Sozialplan für die Beschäftigten. Die Verlage betonen dagegen, dass die Zusammenarbeit die Zukunft des gedruckten Journalismus in der Stadt sichere. Die Kartellbehörde muss dem Vorhaben noch zustimmen; eine Entscheidung wird im Herbst erwartet. Leserinnen und Leser sollen von der Umstellung nichts bemerken, versichern beide Unternehmen.",
        "Berlin (dpa) –",
        "Alle Rechte vorbehalten.",
        ("achtzig Arbeitsplätzen", "neunzig Arbeitsplätzen"),
        "Wandersaison im Schwarzwald",
        "Im Schwarzwald hat die Saison für Wanderer begonnen. Die Gemeinden haben ihre Wege nach dem Winter ausgebessert, neue Schilder aufgestellt und Hütten geöffnet, in denen Besucher regionale Gerichte probieren können. Besonders beliebt sind die Touren zu den Wasserfällen bei Triberg und der Aufstieg auf den Feldberg. Der Tourismusverband rechnet mit einem guten Sommer, warnt aber vor Waldbrandgefahr bei anhaltender Trockenheit.",
    ),
}


def _build() -> list[MlDoc]:
    docs: list[MlDoc] = []
    for lang, (title, story, byline, footer, (old, new), other_title, other) in _STORIES.items():
        assert story.count(old) == 1, f"{lang}: the corrected word must occur once"
        sep = "" if lang in ("zh", "ja") else " "
        docs += [
            MlDoc(f"{lang}-story", lang, title, story),
            MlDoc(f"{lang}-story-wire", lang, title, f"{byline}{sep}{story}{sep}{footer}", f"{lang}-story"),
            MlDoc(f"{lang}-story-fix", lang, title, story.replace(old, new), f"{lang}-story"),
            MlDoc(f"{lang}-other", lang, other_title, other),
        ]
    docs += [
        MlDoc("en-story", "en", "City approves solar farm on old airfield", SOLAR_STORY),
        MlDoc("en-story-wire", "en", "Solar farm approved for Riverton airfield", SYNDICATED_COPY, "en-story"),
        MlDoc("empty-zh", "zh", "（图片）", "……"),
        MlDoc("empty-ja", "ja", "（写真）", "――。"),
    ]
    return docs


MULTILINGUAL: list[MlDoc] = _build()

# (language, query, the key of the document that must be found): each word sits inside the
# document as described in the module docstring.
QUERIES: list[tuple[str, str, str]] = [
    ("zh", "日本队", "zh-story"),
    ("zh", "中国国家队", "zh-story"),
    ("zh", "股市", "zh-other"),
    ("zh", "上证指数", "zh-other"),
    ("ja", "東京", "ja-story"),
    ("ja", "雨", "ja-story"),
    ("ja", "気象庁", "ja-story"),
    ("ja", "新幹線", "ja-other"),
    ("ko", "서울", "ko-story"),
    ("ko", "저상버스", "ko-story"),
    ("ko", "관광객", "ko-other"),
    ("th", "กรุงเทพ", "th-story"),
    ("th", "ฝนตกหนัก", "th-story"),
    ("th", "ข้าวหอมมะลิ", "th-other"),
    ("ar", "القاهرة", "ar-story"),
    ("ar", "معرض الكتاب", "ar-story"),
    ("ar", "التمور", "ar-other"),
    ("ru", "Москва", "ru-story"),
    ("ru", "фестиваль", "ru-story"),
    ("ru", "Байкал", "ru-other"),
    ("de", "Zeitung", "de-story"),
    ("de", "Druckerei", "de-story"),
    ("de", "Schwarzwald", "de-other"),
]

# A query in one language finds documents of that language only, though another language's
# document shares characters with it: the Chinese football story and the Japanese weather story
# both have 日本 ("Japan").
CROSS_LANGUAGE_QUERIES: list[tuple[str, str]] = [("zh", "日本队"), ("ja", "日本の南")]


def families() -> list[set[str]]:
    """Each original with its planted copies, as sets of keys."""
    out: dict[str, set[str]] = {}
    for doc in MULTILINGUAL:
        out.setdefault(doc.copy_of or doc.key, set()).add(doc.key)
    return [keys for keys in out.values() if len(keys) > 1]


def write_jsonl(path: Path, docs: list[MlDoc] | None = None) -> Path:
    """The documents as a JSONL file of the app's import format (id, title, text)."""
    with path.open("w", encoding="utf-8") as fh:
        for doc in docs if docs is not None else MULTILINGUAL:
            fh.write(json.dumps({"id": doc.key, "title": doc.title, "text": doc.text}, ensure_ascii=False) + "\n")
    return path


# --- topic sets for the browser test -------------------------------------------------------
#
# Two clear topics behind one word, like corpora.JAGUAR: 苹果 the company and the fruit; ジャガー
# the car maker and the big cat. Each set also has a long story and its wire copy, found by a
# word only they contain (折叠屏, 電動スポーツカー), so a search shows one folded group.

ZH_APPLE: dict[str, tuple[str, str]] = {
    "co-phone": ("苹果公司发布新款手机", "苹果公司在发布会上推出新款苹果手机，新手机采用自研芯片，拍照和续航都有提升，售价与上一代持平。"),
    "fruit-orchard": ("山东果园苹果丰收", "山东烟台的果园迎来苹果丰收，果农忙着采摘红富士苹果，今年水果产量比去年增加两成。"),
    "co-stock": ("苹果公司股价创新高", "受手机销量增长带动，苹果公司股价创下历史新高，市值再次突破三万亿美元，分析师看好公司前景。"),
    "fruit-plant": ("苹果树种植技术", "农业专家向果农讲解苹果树的种植技术，包括修剪果树、施肥和防治病虫害，帮助果园提高水果品质。"),
    "co-chip": ("苹果公司自研芯片", "苹果公司宣布笔记本电脑全面改用自研芯片，公司表示新芯片性能更强、耗电更少，手机和电脑将共享技术。"),
    "fruit-market": ("水果市场苹果价格下降", "今年苹果丰收，水果批发市场上苹果价格明显下降，果农希望通过电商把水果卖到全国各地。"),
    "co-store": ("苹果公司开设新零售店", "苹果公司在上海开设新的零售店，顾客排队购买新款手机，公司还在店内举办免费的摄影课程。"),
    "fruit-health": ("每天吃一个苹果", "营养专家说，苹果是一种营养丰富的水果，含有大量膳食纤维，每天吃一个苹果有益健康。"),
    "co-app": ("苹果公司应用商店新规", "苹果公司更新应用商店规则，要求手机应用说明收集哪些数据，公司称此举是为了保护用户隐私。"),
    "fruit-export": ("苹果出口东南亚", "陕西果园的苹果今年首次大批出口东南亚，果农和水果企业签订订单，果园收入大幅增加。"),
    "co-sales": ("苹果手机销量增长", "最新报告显示，苹果手机在中国市场的销量同比增长百分之十，苹果公司的市场份额继续扩大。"),
    "fruit-variety": ("新品种苹果上市", "科研人员培育的新品种苹果正式上市，这种水果口感脆甜、耐储存，已在多个果园推广种植。"),
    "co-fold": ("苹果公司或推出折叠屏手机", "据供应链消息，苹果公司正在研发首款折叠屏手机，预计采用内折设计，屏幕展开后接近平板电脑的大小。消息称，苹果公司已经向屏幕供应商下单，首批产量约为一千万台，新手机最早可能在后年秋季发布。分析师认为，折叠屏手机市场目前由其他品牌主导，苹果公司入局后，将推动整个行业的发展，但高昂的售价可能会限制销量。公司方面对此不予置评。"),
}
ZH_APPLE["co-fold-wire"] = (
    "苹果公司或推出折叠屏手机",
    "本报记者 李明 报道" + ZH_APPLE["co-fold"][1] + "（完）",
)

JA_JAGUAR: dict[str, tuple[str, str]] = {
    "car-new": ("ジャガーの新型車を発表", "英国の自動車メーカー、ジャガーは新型の高級車を発表しました。新しい車は電動モーターとエンジンを組み合わせ、燃費が向上しています。"),
    "cat-forest": ("熱帯雨林のジャガー", "ジャガーは中南米の熱帯雨林に暮らす大型の野生動物です。川の近くで獲物を待ち伏せし、ワニや魚も捕らえます。"),
    "car-sales": ("ジャガーの販売台数が増加", "自動車メーカーのジャガーは、今年の新車の販売台数が増えたと発表しました。特に高級車の人気が高く、販売店には試乗の予約が相次いでいます。"),
    "cat-zoo": ("動物園でジャガーの赤ちゃん誕生", "市内の動物園でジャガーの赤ちゃんが誕生しました。母親の動物は赤ちゃんを巣穴に隠し、野生の動物と同じように大切に育てています。"),
    "car-engine": ("ジャガーのエンジン技術", "ジャガーの技術者は、新しいエンジンの開発について説明しました。自動車の燃費を良くするため、エンジンの軽量化を進めたということです。"),
    "cat-hunt": ("ジャガーの狩り", "ジャガーは強いあごを持つ野生動物で、獲物の頭を一度にかみ砕きます。熱帯雨林の川を泳いで渡り、獲物を追うこともあります。"),
    "car-ev": ("ジャガーが電気自動車に転換", "ジャガーは今後すべての新車を電気自動車にすると発表しました。自動車業界では、エンジン車から電気自動車への転換が進んでいます。"),
    "cat-protect": ("ジャガーの保護活動", "森林の伐採が進み、野生動物のジャガーがすむ熱帯雨林が減っています。研究者は動物の通り道を守る保護活動を続けています。"),
    "car-race": ("ジャガーがレースで優勝", "自動車レースで、ジャガーのチームが優勝しました。新型の車は加速が良く、エンジンとモーターの性能が高く評価されました。"),
    "cat-camera": ("カメラがとらえた野生のジャガー", "熱帯雨林に設置したカメラが、夜に歩く野生のジャガーの姿をとらえました。動物の研究者は、獲物を探す様子を詳しく調べています。"),
    "car-price": ("ジャガーの新車価格", "ジャガーは主力の高級車の価格を引き上げると発表しました。自動車の部品や材料の値上がりが理由だということです。"),
    "cat-river": ("川辺で休むジャガー", "ジャガーは水を好む珍しい大型の動物で、熱帯雨林の川辺でよく休みます。獲物のカピバラを狙って水に入ることもあります。"),
    "car-sport": ("ジャガーが電動スポーツカーを公開", "英国の自動車メーカー、ジャガーは、初めての電動スポーツカーを公開しました。新しい車は二つのモーターを備え、停止状態から時速百キロまでわずか三秒で加速します。一回の充電で走れる距離はおよそ五百キロで、急速充電にも対応しています。会社によりますと、電動スポーツカーは来年夏からヨーロッパで販売を始め、その後、日本でも発売する予定です。価格は二千万円前後になる見込みで、販売店にはすでに問い合わせが寄せられているということです。"),
}
JA_JAGUAR["car-sport-wire"] = (
    "ジャガーが電動スポーツカーを公開",
    "【共同通信】" + JA_JAGUAR["car-sport"][1] + "（記者：山田太郎）",
)
