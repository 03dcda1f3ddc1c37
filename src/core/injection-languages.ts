// Injection phrases in other languages (issue 15 item 7): "ignore the previous instructions",
// "you are now <another assistant>", "show your system prompt" and "disregard …" in German,
// French, Spanish, Portuguese, Italian, Dutch, Russian, Chinese and Japanese. They read text
// folded by screening-text.ts (lower case, accents dropped from Latin letters, so "précédentes"
// is written "precedentes" here). Like the English rules, an override needs a qualifier that
// points at the reader's own instructions ("previous", "all", "your", "system"), and a role change
// needs a role noun, so "Sie sind jetzt angemeldet" or "ignoriere die Warnung" stay clean. Pure.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.

export interface LanguageRule {
  lang: string;
  kind: "instruction_override" | "role_takeover";
  pattern: RegExp;
  /** For override rules: a qualifier must appear in the captured words around the noun. */
  qualifier?: RegExp;
  /**
   * A cheap test the text must pass before the pattern runs (a word the phrase cannot do without,
   * or the script it is written in): most texts fail it, and Unicode patterns are slow to scan.
   */
  needs: RegExp[];
  /**
   * For phrases in Latin script: one of these words must be in the text (a set lookup per word,
   * far cheaper than scanning with a Unicode regex; most texts have none of them).
   */
  words?: ReadonlySet<string>;
  detail: string;
}

// Word edges that work for every script (\b only knows ASCII letters).
const B = "(?<![\\p{L}\\p{N}])";
const E = "(?![\\p{L}\\p{N}])";
const WORDS = (n: number) => `((?:[\\p{L}'-]+\\s+){0,${n}}?)`;
const TRAIL = "((?:\\s+[\\p{L}'-]+){0,2})";

/** A prefilter: plain (non-Unicode-mode) regexes scan several times faster; Cyrillic ones need the script only. */
const quick = (alternatives: string) => (alternatives.includes("\\p{") ? /[\u0400-\u04ff]/ : new RegExp(alternatives));

/** verb … noun …: the qualifier may stand before the noun (German, Dutch) or after it (Romance languages). */
const wordSet = (words: string) => (words ? { words: new Set(words.split(" ")), needs: [] as RegExp[] } : {});

function override(lang: string, verbs: string, nouns: string, qualifiers: string, words = ""): LanguageRule {
  return {
    lang,
    kind: "instruction_override",
    pattern: new RegExp(`${B}(?:${verbs})\\s+${WORDS(4)}(?:${nouns})${E}${TRAIL}`, "gu"),
    qualifier: new RegExp(`${B}(?:${qualifiers})${E}`, "u"),
    needs: [quick(nouns), quick(verbs)],
    ...wordSet(words),
    detail: "asks the reader to ignore its instructions",
  };
}

/** qualifier … noun … verb: object-first word order ("alle vorherigen Anweisungen ignorieren"). */
function overrideObjectFirst(lang: string, qualifiers: string, nouns: string, verbs: string, words = ""): LanguageRule {
  return {
    lang,
    kind: "instruction_override",
    pattern: new RegExp(
      `${B}(?:${qualifiers})\\s+(?:[\\p{L}'-]+\\s+){0,2}?(?:${nouns})\\s+(?:[\\p{L}'-]+\\s+){0,2}?(?:${verbs})${E}`,
      "gu",
    ),
    needs: [quick(verbs), quick(nouns)],
    ...wordSet(words),
    detail: "asks the reader to ignore its instructions",
  };
}

function role(lang: string, youAreNow: string, roles: string, words = ""): LanguageRule {
  return {
    lang,
    kind: "role_takeover",
    pattern: new RegExp(`${B}(?:${youAreNow})\\s+(?:[\\p{L}'-]+\\s+){0,3}?(?:${roles})${E}`, "gu"),
    needs: [quick(youAreNow)],
    ...wordSet(words),
    detail: "tries to change the reader's role",
  };
}

function systemPrompt(lang: string, needs: RegExp[], pattern: string, words = ""): LanguageRule {
  return {
    lang,
    kind: "role_takeover",
    pattern: new RegExp(pattern, "gu"),
    needs,
    ...wordSet(words),
    detail: "asks the reader to reveal its system prompt",
  };
}

const CYRILLIC = /[\u0400-\u04ff]/;
const HAN = /[\u4e00-\u9fff]/;
const KANA = /[\u3040-\u30ff]/;

const ROLE_EN = "ai|llm|dan|chatbot|gpt|jailbroken";

export const LANGUAGE_RULES: LanguageRule[] = [
  // German
  override(
    "German",
    "ignorier(?:e|en|t)?|missachte(?:n|t)?|vergiss|vergesst|vergessen|ubergehe(?:n)?|umgehe(?:n)?",
    "anweisungen|instruktionen|befehle|vorgaben|regeln|richtlinien|anordnungen|prompts?|systemanweisungen",
    "alle|samtliche|jegliche|deine|ihre|eure|vorherigen|vorigen|bisherigen|obigen|fruheren|vorangegangenen|vorhergehenden|ursprunglichen|system",
    "ignoriere ignorieren ignoriert ignorier missachte missachten missachtet vergiss vergesst vergessen ubergehe ubergehen umgehe umgehen",
  ),
  overrideObjectFirst(
    "German",
    "alle|samtliche|deine|ihre|vorherigen|vorigen|bisherigen|obigen|fruheren|vorangegangenen|vorhergehenden",
    "anweisungen|instruktionen|befehle|vorgaben|regeln|richtlinien",
    "ignorieren|missachten|vergessen|ubergehen",
    "ignorieren missachten vergessen ubergehen",
  ),
  {
    lang: "German",
    kind: "instruction_override",
    pattern: new RegExp(
      `${B}(?:vergiss|ignoriere|missachte)\\s+alles\\s+(?:was\\s+(?:du|dir)|bisherige|vorherige|obige|davor|oben|bisher)`,
      "gu",
    ),
    needs: [],
    words: new Set(["alles"]),
    detail: "asks the reader to disregard what came before",
  },
  role(
    "German",
    "(?:du bist|sie sind|ihr seid)\\s+(?:jetzt|nun|ab sofort|ab jetzt|von nun an)",
    `${ROLE_EN}|ki|assistent(?:in)?|chatbot|sprachmodell|modell ohne \\p{L}+|ohne (?:einschrankungen|regeln|filter|grenzen)`,
    "bist sind seid",
  ),
  systemPrompt(
    "German",
    [/system/],
    `${B}(?:zeige?|zeigt|gib|verrate|nenne|wiederhole|schreibe?)\\s+(?:mir\\s+|uns\\s+)?(?:deinen|deine|den|die|ihren|ihre)\\s+(?:\\p{L}+\\s+)?(?:system-?prompt|systemanweisung(?:en)?|systemnachricht)${E}`,
    "systemprompt system-prompt systemanweisung systemanweisungen systemnachricht",
  ),

  // French
  override(
    "French",
    "ignore[rz]?|oublie[rz]?|neglige[rz]?|ne (?:tiens|tenez|tenir) pas compte d(?:es|e|u)|fais abstraction d(?:es|e)|faites abstraction d(?:es|e)",
    "instructions?|consignes?|directives?|regles|indications|prompts?",
    "precedentes?|anterieures?|ci-dessus|toutes|tes|vos|systeme|initiales?|d'origine|donnees",
    "ignore ignorer ignorez oublie oublier oubliez neglige negliger negligez compte abstraction",
  ),
  role(
    "French",
    "(?:tu es|vous etes|t'es)\\s+(?:maintenant|desormais|a present|dorenavant)",
    `${ROLE_EN}|ia|assistant|assistante|modele|sans (?:restrictions?|limites?|filtres?|regles)`,
    "es etes t'es",
  ),
  systemPrompt(
    "French",
    [/system/],
    `${B}(?:montre|affiche|revele|donne|repete|ecris|dis)[rz]?(?:-moi|\\s+moi)?\\s+(?:ton|ta|votre|le|la)\\s+(?:prompt|invite|message|consigne)s?\\s+(?:systeme|system|initial)${E}`,
    "systeme system initial",
  ),

  // Spanish
  override(
    "Spanish",
    "ignora[rd]?|ignore[ns]?|olvida[rd]?|olvide[ns]?|descarta[rd]?|omite|haz caso omiso (?:a|de)|no hagas caso (?:a|de)",
    "instrucciones|indicaciones|directrices|reglas|ordenes|prompts?",
    "anteriores|previas|todas|tus|sus|sistema|originales|arriba|precedentes|iniciales",
    "ignora ignorar ignorad ignore ignoren ignores olvida olvidar olvidad olvide olviden olvides descarta descartar descartad omite omiso hagas",
  ),
  role(
    "Spanish",
    "(?:ahora|a partir de ahora|desde ahora|de ahora en adelante)\\s*,?\\s+(?:tu\\s+)?eres|eres ahora",
    `${ROLE_EN}|ia|asistente|modelo|sin (?:restricciones|filtros|limites|reglas)`,
    "eres",
  ),
  systemPrompt(
    "Spanish",
    [/sistema/],
    `${B}(?:muestra|revela|dime|imprime|repite|ensena|escribe)(?:me)?\\s+(?:tu|el|su)\\s+(?:prompt|mensaje|indicacion|instrucciones)\\s+(?:del|de)\\s+sistema${E}`,
    "sistema",
  ),

  // Portuguese
  override(
    "Portuguese",
    "ignore|ignora[rd]?|esqueca|esquece[rd]?|desconsidere|desconsidera[rd]?|descarte",
    "instrucoes|orientacoes|diretrizes|regras|ordens|comandos|prompts?",
    "anteriores|previas|todas|suas|tuas|sistema|originais|acima|iniciais",
    "ignore ignora ignorar esqueca esquece esquecer desconsidere desconsidera desconsiderar descarte",
  ),
  role(
    "Portuguese",
    "(?:agora|a partir de agora|de agora em diante)\\s*,?\\s+(?:voce|tu)\\s+(?:e|es)|voce agora e",
    `${ROLE_EN}|ia|assistente|modelo|sem (?:restricoes|filtros|limites|regras)`,
    "voce tu",
  ),
  systemPrompt(
    "Portuguese",
    [/sistema/],
    `${B}(?:mostre|mostra|revele|revela|diga|diz|imprima|repita|escreva)(?:-me)?\\s+(?:seu|o|teu|sua|a)\\s+(?:prompt|mensagem|instrucoes)\\s+do\\s+sistema${E}`,
    "sistema",
  ),

  // Italian
  override(
    "Italian",
    "ignora(?:re)?|ignorate|dimentica(?:re)?|dimenticate|trascura(?:re)?|non tenere conto d(?:elle|i)|non considerare",
    "istruzioni|indicazioni|direttive|regole|ordini|prompt",
    "precedenti|tutte|tue|sue|sistema|originali|sopra|iniziali|ricevute",
    "ignora ignorare ignorate dimentica dimenticare dimenticate trascura trascurare tenere considerare",
  ),
  role(
    "Italian",
    "(?:ora|adesso|d'ora in poi|da ora in poi|da adesso)\\s*,?\\s+(?:tu\\s+)?sei",
    `${ROLE_EN}|ia|assistente|modello|senza (?:restrizioni|filtri|limiti|regole)`,
    "sei",
  ),
  systemPrompt(
    "Italian",
    [/sistema/],
    `${B}(?:mostra|rivela|dimmi|stampa|ripeti|scrivi)(?:mi)?\\s+(?:il tuo|il|tuo|il vostro)\\s+(?:prompt|messaggio|istruzioni)\\s+di\\s+sistema${E}`,
    "sistema",
  ),

  // Dutch
  override(
    "Dutch",
    "negeer|negeren|vergeet|vergeten|veronachtzaam",
    "instructies|aanwijzingen|opdrachten|regels|richtlijnen|prompts?|systeeminstructies",
    "vorige|voorgaande|eerdere|alle|je|jouw|uw|bovenstaande|systeem|oorspronkelijke",
    "negeer negeren vergeet vergeten veronachtzaam",
  ),
  overrideObjectFirst(
    "Dutch",
    "alle|vorige|voorgaande|eerdere|bovenstaande",
    "instructies|aanwijzingen|opdrachten|regels",
    "negeren|vergeten",
    "negeren vergeten",
  ),
  role(
    "Dutch",
    "(?:je bent|jij bent|u bent)\\s+(?:nu|vanaf nu)|vanaf nu ben je",
    `${ROLE_EN}|assistent|model|zonder (?:beperkingen|filters|regels)`,
    "bent ben",
  ),
  systemPrompt(
    "Dutch",
    [/systeem/],
    `${B}(?:toon|laat|geef|herhaal|noem)\\s+(?:me\\s+|mij\\s+|ons\\s+)?(?:je|jouw|de|uw)\\s+(?:systeem-?prompt|systeeminstructies|systeembericht)${E}`,
    "systeemprompt systeem-prompt systeeminstructies systeembericht",
  ),

  // Russian
  override(
    "Russian",
    "проигнорируй(?:те)?|игнорируй(?:те)?|игнорировать|забудь(?:те)?|забыть|не обращай(?:те)? внимания на|пренебреги|отбрось(?:те)?|не следуй(?:те)?|не выполняй(?:те)?",
    "инструкци\\p{L}*|указани\\p{L}*|правил\\p{L}*|команд\\p{L}*|промпт\\p{L}*|подсказк\\p{L}*|распоряжени\\p{L}*",
    "предыдущ\\p{L}*|прежн\\p{L}*|прошл\\p{L}*|все|всё|свои|ваши|твои|системн\\p{L}*|изначальн\\p{L}*|вышеуказанн\\p{L}*|выше|данные тебе",
  ),
  role(
    "Russian",
    "(?:теперь ты|ты теперь|отныне ты|с этого момента ты|теперь вы|вы теперь)",
    `${ROLE_EN}|ии|ассистент\\p{L}*|помощник\\p{L}*|чат-?бот\\p{L}*|модель\\p{L}*|без (?:ограничений|фильтров|правил|цензуры)`,
  ),
  systemPrompt(
    "Russian",
    [CYRILLIC],
    `${B}(?:покажи|выведи|раскрой|напиши|повтори|скажи|сообщи)(?:те)?\\s+(?:мне\\s+)?(?:свой|свою|свои|твой|твою|ваш|вашу)?\\s*системн\\p{L}*\\s+(?:промпт|подсказк|инструкци|сообщени)\\p{L}*`,
  ),

  // Chinese (simplified and traditional): no spaces between words, so no word edges.
  {
    lang: "Chinese",
    kind: "instruction_override",
    needs: [HAN],
    pattern:
      /(?:忽略|忽视|忽視|无视|無視|不要理会|不要理會|不理会|忘记|忘記|忘掉|跳过|跳過|抛开|拋開)(?:掉)?(?:你)?(?:之前|以前|先前|此前|上面|上述|前面|前述|原来|原來|原有|所有|全部|一切|系统|系統)(?:的)?(?:所有|全部|一切)?(?:的)?(?:指令|指示|说明|說明|提示词|提示詞|提示|规则|規則|命令)/gu,
    detail: "asks the reader to ignore its instructions",
  },
  {
    lang: "Chinese",
    kind: "role_takeover",
    needs: [HAN],
    pattern:
      /(?:你现在是|你現在是|从现在开始[，,]?你是|從現在開始[，,]?你是|从现在起[，,]?你是|從現在起[，,]?你是|现在你是|現在你是)[^。，,.\n]{0,12}?(?:助手|助理|人工智能|ai|机器人|機器人|模型|dan|不受限制|没有限制|沒有限制|无限制|無限制)/gu,
    detail: "tries to change the reader's role",
  },
  {
    lang: "Chinese",
    kind: "role_takeover",
    needs: [HAN],
    pattern:
      /(?:显示|顯示|输出|輸出|告诉我|告訴我|打印|泄露|洩露|透露|重复|重複|展示|给我看|給我看)(?:一下)?(?:你的)?(?:完整的)?(?:系统提示词?|系統提示詞?|系统指令|系統指令|系统消息|系統訊息|系统设定|系統設定)/gu,
    detail: "asks the reader to reveal its system prompt",
  },

  // Japanese
  {
    lang: "Japanese",
    kind: "instruction_override",
    needs: [KANA],
    pattern:
      /(?:以前|前|上記|これまで|今まで|先ほど|既存|元|最初|システム)の(?:すべての|全ての|全部の)?(?:指示|命令|指令|ルール|プロンプト|制約)(?:は|を)?(?:すべて|全て|全部)?(?:無視|忘れ|破棄|無効)/gu,
    detail: "asks the reader to ignore its instructions",
  },
  {
    lang: "Japanese",
    kind: "instruction_override",
    needs: [KANA],
    pattern: /(?:すべての|全ての|全部の)(?:指示|命令|指令|ルール|プロンプト|制約)を(?:無視|忘れ|破棄)/gu,
    detail: "asks the reader to ignore its instructions",
  },
  {
    lang: "Japanese",
    kind: "role_takeover",
    needs: [KANA],
    pattern:
      /(?:あなたは(?:今|いま|今から|これから|もう)|今からあなたは|これからあなたは)[^。、\n]{0,12}?(?:アシスタント|ai|エーアイ|モデル|チャットボット|dan|制限のない|制限なし|無制限)/gu,
    detail: "tries to change the reader's role",
  },
  {
    lang: "Japanese",
    kind: "role_takeover",
    needs: [KANA],
    pattern: /システムプロンプト(?:の内容)?を(?:表示|教え|出力|見せ|開示|繰り返|書き出)/gu,
    detail: "asks the reader to reveal its system prompt",
  },
];

/**
 * Phrases spelled without spaces once letter-spacing is collapsed ("i g n o r e p r e v i o u s
 * i n s t r u c t i o n s" → "ignorepreviousinstructions"). Only run on collapsed runs.
 */
export const COMPACT_RULES: { kind: "instruction_override" | "role_takeover"; pattern: RegExp; detail: string }[] = [
  {
    kind: "instruction_override",
    pattern:
      /(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|of|everything)*(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety|developer)(?:instructions?|prompts?|directions|directives|guidelines|rules|guardrails|restrictions|constraints|messages)/,
    detail: "asks the reader to ignore its instructions, letter by letter",
  },
  {
    kind: "instruction_override",
    pattern: /(?:ignore|disregard|forget)(?:everything|all|anything)(?:above|before|prior)/,
    detail: "asks the reader to disregard what came before, letter by letter",
  },
  {
    kind: "role_takeover",
    pattern: /youare(?:now|nolonger)(?:a|an|the|in)?(?:dan|jailbroken|unrestricted|unfiltered|uncensored|developermode|godmode|evil)/,
    detail: "tries to change the reader's role, letter by letter",
  },
  {
    kind: "role_takeover",
    pattern:
      /(?:reveal|print|show|repeat|output|display|leak|dump)(?:me)?(?:your|the)(?:full|entire|initial|original|hidden|secret|exact)*(?:systemprompt|systemmessage|initialprompt)/,
    detail: "asks the reader to reveal its system prompt, letter by letter",
  },
];

/** Every gate word of LANGUAGE_RULES, found in one scan of the text (a Set per word costs three times as much). */
export const GATE_WORDS = (() => {
  const all = [...new Set(LANGUAGE_RULES.flatMap((r) => [...(r.words ?? [])]))].sort((a, b) => b.length - a.length);
  return new RegExp(`(?<![a-z'-])(?:${all.map((w) => w.replace(/[-']/g, "\\$&")).join("|")})(?![a-z'-])`, "g");
})();
