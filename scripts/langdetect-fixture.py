#!/usr/bin/env python3
"""Writes tests/fixtures/langdetect.jsonl: texts and the label Python's langdetect 1.0.9 gives
each with DetectorFactory.seed = 0 (PRISM's language rule), for tests/langdetect.rs.

Run once with langdetect 1.0.9 installed (`pip install langdetect==1.0.9`):
    python3 scripts/langdetect-fixture.py [PATH-TO-PRISM-MINI]
The texts are generated here (sentences of our own in many languages, cut, cased, mixed, wrapped
the way model answers are) plus every question of prism-mini when its path is given. A text
langdetect cannot label (it raises) gets "lang": null.
"""
import glob
import json
import os
import sys

import langdetect
from langdetect import DetectorFactory, detect

DetectorFactory.seed = 0
assert langdetect.__version__ == "1.0.9" if hasattr(langdetect, "__version__") else True

# Sentences of our own, several per language; the IFE-LgC languages (zh, de, fr, ru, ja, es)
# have the most.
SENTENCES = {
    "en": [
        "The weather is lovely today, so let us take a walk in the park.",
        "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
        "I do not know the answer to that question.",
        "The answer is B because the other options contradict the premise.",
        "Please find attached the quarterly report for your review.",
    ],
    "zh": [
        "今天天气很好，我们一起去公园散步吧。",
        "光合作用把光、水和二氧化碳变成糖和氧气。",
        "我不知道这个问题的答案。",
        "这家公司成立于一九九八年，总部位于北京。",
        "请用简单的语言解释什么是机器学习。",
        "答案是B，因为其他选项与前提相矛盾。",
    ],
    "ja": [
        "今日はとても良い天気なので、公園に散歩に行きましょう。",
        "光合成は光と水と二酸化炭素から糖と酸素を作ります。",
        "その質問の答えはわかりません。",
        "この会社は東京に本社を置くソフトウェア企業です。",
        "機械学習とは何かを簡単な言葉で説明してください。",
        "答えはBです。ほかの選択肢は前提と矛盾します。",
    ],
    "fr": [
        "Aujourd'hui il fait très beau, allons nous promener dans le parc.",
        "La photosynthèse transforme la lumière, l'eau et le dioxyde de carbone en sucre.",
        "Je ne connais pas la réponse à cette question.",
        "Cette entreprise a été fondée en 1998 et son siège est à Lyon.",
        "Expliquez simplement ce qu'est l'apprentissage automatique.",
        "La réponse est B, car les autres options contredisent la prémisse.",
    ],
    "de": [
        "Heute ist das Wetter sehr schön, lass uns im Park spazieren gehen.",
        "Die Photosynthese verwandelt Licht, Wasser und Kohlendioxid in Zucker.",
        "Ich kenne die Antwort auf diese Frage nicht.",
        "Das Unternehmen wurde 1998 gegründet und hat seinen Sitz in München.",
        "Erklären Sie bitte einfach, was maschinelles Lernen ist.",
        "Die Antwort ist B, weil die anderen Optionen der Prämisse widersprechen.",
    ],
    "ru": [
        "Сегодня очень хорошая погода, давайте пойдём гулять в парк.",
        "Фотосинтез превращает свет, воду и углекислый газ в сахар и кислород.",
        "Я не знаю ответа на этот вопрос.",
        "Компания была основана в 1998 году, её штаб-квартира находится в Москве.",
        "Объясните простыми словами, что такое машинное обучение.",
        "Ответ B, потому что остальные варианты противоречат условию.",
    ],
    "es": [
        "Hoy hace muy buen tiempo, vamos a pasear por el parque juntos.",
        "La fotosíntesis convierte la luz, el agua y el dióxido de carbono en azúcar.",
        "No sé la respuesta a esta pregunta.",
        "La empresa fue fundada en 1998 y tiene su sede en Sevilla.",
        "Explique de forma sencilla qué es el aprendizaje automático.",
        "La respuesta es B, porque las otras opciones contradicen la premisa.",
    ],
    "it": [
        "Oggi il tempo è bellissimo, andiamo a fare una passeggiata nel parco.",
        "Non conosco la risposta a questa domanda.",
    ],
    "pt": [
        "Hoje o tempo está ótimo, vamos passear no parque.",
        "Não sei a resposta para esta pergunta.",
    ],
    "nl": [
        "Vandaag is het prachtig weer, laten we in het park gaan wandelen.",
        "Ik weet het antwoord op deze vraag niet.",
    ],
    "pl": ["Dzisiaj jest piękna pogoda, chodźmy na spacer do parku."],
    "sv": ["Idag är vädret underbart, låt oss ta en promenad i parken."],
    "da": ["I dag er vejret dejligt, lad os gå en tur i parken."],
    "no": ["I dag er været nydelig, la oss gå en tur i parken."],
    "fi": ["Tänään on kaunis sää, mennään kävelylle puistoon."],
    "tr": ["Bugün hava çok güzel, haydi parkta yürüyüşe çıkalım."],
    "cs": ["Dnes je krásné počasí, pojďme se projít do parku."],
    "hu": ["Ma gyönyörű az idő, sétáljunk egyet a parkban."],
    "ro": ["Astăzi vremea este frumoasă, hai să ne plimbăm prin parc."],
    "uk": ["Сьогодні чудова погода, ходімо погуляти в парк."],
    "bg": ["Днес времето е много хубаво, хайде да се разходим в парка заедно."],
    "el": ["Σήμερα ο καιρός είναι υπέροχος, ας πάμε βόλτα στο πάρκο."],
    "ar": ["الطقس جميل اليوم، دعنا نتمشى في الحديقة."],
    "he": ["מזג האוויר נפלא היום, בואו נטייל בפארק."],
    "fa": ["امروز هوا خیلی خوب است، بیایید در پارک قدم بزنیم."],
    "hi": ["आज मौसम बहुत अच्छा है, चलो पार्क में टहलने चलते हैं।"],
    "ko": ["오늘 날씨가 정말 좋으니 공원에 산책하러 가자."],
    "vi": ["Hôm nay trời rất đẹp, chúng ta hãy đi dạo trong công viên."],
    "th": ["วันนี้อากาศดีมาก ไปเดินเล่นในสวนสาธารณะกันเถอะ"],
    "id": ["Hari ini cuacanya sangat bagus, mari kita berjalan-jalan di taman."],
    "ca": ["Avui fa un temps preciós, anem a passejar pel parc."],
    "hr": ["Danas je prekrasno vrijeme, idemo u šetnju parkom."],
    "sk": ["Dnes je krásne počasie, poďme sa prejsť do parku."],
    "lt": ["Šiandien puikus oras, eikime pasivaikščioti į parką."],
    "lv": ["Šodien ir skaists laiks, iesim pastaigāties parkā."],
    "et": ["Täna on ilus ilm, lähme pargis jalutama."],
    "sw": ["Leo hali ya hewa ni nzuri sana, twende tukatembee bustanini."],
    "tl": ["Napakaganda ng panahon ngayon, maglakad tayo sa parke."],
}

# What model answers to PRISM items look like when they are not prose.
SHORT = [
    "", " ", "\n", "\t\n ", "A", "B.", "C)", "**D**", "(A)", "Answer: B", "The answer is C.",
    "[TRUE]", "[FALSE]", "[NO_INFO]", "Answer: [NO_INFO]", "NO_INFO", "TRUE", "FALSE", "yes",
    "No.", "Yes", "no", "maybe", "OK", "N/A", "n/a", "null", "None", "true", "false",
    "1", "42", "3.14", "1,000,000", "2024-05-01", "12:30", "1 2 3 4 5", "+1 (555) 123-4567",
    "100%", "$5", "¥500", "€20", "x = 5", "x^2 + 2x + 1 = 0", "∑ i = n(n+1)/2", "√2 ≈ 1.414",
    "!!!", "...", "???", "---", "***", "******", "<<title>>", "<<>>", "#", "# Answer",
    "# Output Format", "- item", "* item", "1. first\n2. second", "😀", "👍👍", "🙂 ok",
    "→ ← ↑ ↓", "© 2024", "™", "§ 3", "a", "I", "é", "ß", "ñ", "ç", "ø", "å", "ü",
    "中", "日本", "한", "я", "ä", "α", "λ", "ж", "ق", "ש", "อ", "ก", "文", "字",
    "Paris", "Tokyo", "Berlin", "Moscow", "Madrid", "Beijing", "München", "São Paulo",
    "Zürich", "Kraków", "Ελλάδα", "Россия", "日本語", "中文", "Español", "Français",
    "Deutsch", "English", "Python", "JavaScript", "JSON", "XML", "YAML", "CSV", "Markdown",
    "My answer is yes.", "My answer is no.", "My answer is maybe.",
    "first answer ****** second answer", "P.S. thanks", "P.P.S. see you",
    "Section 1\nSection 2", "SECTION 1", "PARAGRAPH 1", "[name] [address]",
]

CODE = [
    '```json\n{"name": "Alice", "age": 30}\n```',
    '{"name": "Alice", "age": 30}',
    '{"a": [1, 2, 3], "b": {"c": null}}',
    "```python\ndef add(a, b):\n    return a + b\n```",
    "def add(a, b):\n    return a + b",
    "for i in range(10):\n    print(i)",
    "SELECT name, age FROM users WHERE age > 30 ORDER BY name;",
    "<note><to>Tove</to><from>Jani</from></note>",
    "<?xml version=\"1.0\"?>\n<root><item id=\"1\">x</item></root>",
    "name,age\nAlice,30\nBob,25",
    "key: value\nlist:\n  - a\n  - b",
    "int main() { return 0; }",
    "#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); }",
    "console.log('hello world');",
    "let x: Vec<u32> = vec![1, 2, 3];",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "<html><body><h1>Title</h1></body></html>",
    "$ ls -la /usr/local/bin",
    "git commit -m 'fix'",
    "https://example.com/path?q=1",
    "user@example.com",
]

MIXED = [
    "Hello 你好",
    "你好 hello world",
    "Привет world",
    "Bonjour, 世界",
    "Das ist ein Test. これはテストです。",
    "答案: B",
    "Answer: 东京",
    "Ответ: Paris",
    "La réponse: 42",
    "Die Antwort lautet: Berlin",
    "Python是一种编程语言。",
    "JSON形式で出力します。",
    "Я думаю, что ответ — Option A.",
    "Le modèle GPT-4 est un LLM.",
    "El API devuelve un JSON con los campos name y age.",
    "Die API gibt JSON zurück.",
    "The capital of France is Paris (Париж, 巴黎).",
    "東京 Tokyo Токио",
]


def cut(s, n):
    """The first n whitespace-separated pieces (or characters, for scripts without spaces)."""
    parts = s.split()
    if len(parts) > 1:
        return " ".join(parts[:n])
    return s[: n * 2]


def texts(mini):
    out = []
    seen = set()

    def add(t):
        if t not in seen:
            seen.add(t)
            out.append(t)

    for lang in sorted(SENTENCES):
        sents = SENTENCES[lang]
        for s in sents:
            add(s)
            for n in (1, 2, 3, 5):
                add(cut(s, n))
            add(s.upper())
            add(s.lower())
            add("Answer: " + s)
            add("**" + s + "**")
            add("1. " + s + "\n2. " + s)
            add(s + " " + CODE[len(s) % len(CODE)])
            add("```\n" + s + "\n```")
            add('"' + s + '"')
        add(" ".join(sents))
        add("\n\n".join(sents) + "\n\nP.S. " + sents[0])
        add(" ****** ".join(sents[:2]) if len(sents) > 1 else sents[0] + " ****** " + sents[0])
    for t in SHORT + CODE + MIXED:
        add(t)
        add(t.upper())
        add(t + "\n")
    # Pairs of languages in one text, both orders.
    langs = sorted(SENTENCES)
    for i, a in enumerate(langs):
        b = langs[(i * 7 + 3) % len(langs)]
        add(SENTENCES[a][0] + " " + SENTENCES[b][0])
        add(SENTENCES[b][-1] + "\n" + SENTENCES[a][-1])
    if mini:
        for f in sorted(glob.glob(os.path.join(mini, "data", "**", "*.jsonl"), recursive=True)):
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    q = rec.get("question")
                    if isinstance(q, str):
                        add(q)
                        add(q[:40])
                    a = rec.get("answer")
                    if isinstance(a, str):
                        add(a)
    return out


def label(t):
    try:
        return detect(t)
    except langdetect.lang_detect_exception.LangDetectException:
        return None


def main():
    mini = sys.argv[1] if len(sys.argv) > 1 else None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "tests", "fixtures", "langdetect.jsonl")
    rows = texts(mini)
    with open(path, "w", encoding="utf-8") as f:
        for t in rows:
            f.write(json.dumps({"text": t, "lang": label(t)}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} texts -> {path} (Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
