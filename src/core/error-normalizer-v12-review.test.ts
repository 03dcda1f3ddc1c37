// Normalizer version 12 read adversarially (review18, bench/RESULTS.md "Session 18 review"): the
// defects found in version 12's new rules, each with real reports (every link and text
// isHoldoutUrl/isHoldoutText false) that fail on the rules as first written. Wrong joins: a command
// given as a path read as no command at all, an addon read by a file name many packages share.
// Splits: PowerShell's, cmd.exe's Chinese and dash's script wording of "command not found", and git's
// "Aborting" closing a reporter's quotation (a seventh-set report). Then each changed pattern's CPU time on 1 MB.
import { describe, expect, test } from "bun:test";
import { loadRealVariantSets, reportTextIn } from "../../test/support/real-variants.ts";
import { filledMegabyte, linearTimeTests, pairTests } from "../../test/support/normalizer-versions.ts";
import { normalizeError } from "./fingerprint.ts";

const report = reportTextIn(loadRealVariantSets());

/** [what, a, b]: different errors (real reports, links given) version 12 must keep apart. */
const APART: [string, string, string][] = [
  [
    // https://github.com/cmderdev/cmder/issues/1154 (a path with a blank left unquoted) against
    // https://github.com/kriscross07/atom-gpp-compiler/issues/359 (a compiled program that is not
    // there): version 12 read both as the bare "command not found", the form of every command
    // given as a path without an extension.
    "cmd.exe's commands given as paths: the command's last part, not nothing",
    "'C:\\Program' is not recognized as an internal or external command,\noperable program or batch file",
    "'C:\\Users\\there\\AppData\\Local\\Temp\\gamer' is not recognized as an internal or external command, operable program or batch file.",
  ],
  [
    // https://github.com/TooTallNate/ref/issues/118 against
    // https://github.com/sandeepmistry/node-xpc-connection/issues/18: two packages whose addon is
    // build/Release/binding.node; version 12 kept the file name only.
    "two packages' addons with one file name (binding.node): the package is kept",
    "Error: The module '/Users/wupeng/lncc-electron-vue/node_modules/ref/build/Release/binding.node'\n  was compiled against a different Node.js version using\n  NODE_MODULE_VERSION 57. This version of Node.js requires\n  NODE_MODULE_VERSION 69. Please try re-compiling or re-installing\n  the module (for instance, using `npm rebuild` or `npm install`).",
    "The module '/Users/gineign/Developer/electron-sensortag/node_modules/xpc-connection/build/Release/binding.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 53. This version of Node.js requires\nNODE_MODULE_VERSION 51.",
  ],
];

const POWERSHELL_PIP =
  // https://github.com/charann29/opensource/issues/349
  "pip : The term 'pip' is not recognized as the name of a cmdlet, function, script file, or \noperable program. Check the spelling of the name, or if a path was included, verify that the     \npath is correct and try again.\nAt line:1 char:1\n+ pip install streamlit\n+ ~~~\n    + CategoryInfo          : ObjectNotFound: (pip:String) [], CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException";

/** [what, a, b]: reports of one error (real, links given) version 12 as first written gave two forms. */
const JOINED: [string, string, string][] = [
  ["PowerShell's wording against bash's (the seventh set's weiboSpider report)", POWERSHELL_PIP, report("shell-pip-command-not-found", 4)],
  [
    "PowerShell's wording after its prompt, against zsh's (the seventh set's pip report)",
    // https://github.com/microsoft/vscode-docs/issues/5472
    "PS C:\\users\\default\\anaconda3\\lib\\site-packages> pip install mysql-connector\npip : The term 'pip' is not recognized as the name of a cmdlet, function, script file, or operable program. Check the spelling of the name, or if a path was included, verify that the \npath is correct and try again.\nAt line:1 char:1\n+ pip install mysql-connector\n+ ~~~\n    + CategoryInfo          : ObjectNotFound: (pip:String) [], CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException",
    report("shell-pip-command-not-found", 0),
  ],
  [
    "cmd.exe in Chinese, against cmd.exe in English (the seventh set's python-tools report)",
    // https://github.com/lss233/kirara-ai/issues/1323
    "'python' 不是内部或外部命令，也不是可运行的程序[BUG] 请填写标题",
    report("windows-python-not-recognized", 1),
  ],
  [
    "cmd.exe in Chinese with the name in typographic quotes, against cmd.exe in English (the seventh set's PalworldSaveTools report)",
    // https://github.com/Jay-Goo/ProtectedApkResignerForWalle/issues/4
    "\u2019python\u2018 不是内部或外部命令，也不是可运行的程序或批处理文件  \n\n怎么解决呀",
    report("windows-python-not-recognized", 0),
  ],
  [
    "dash's wording in a script (the script named twice), against bash's in a script",
    // https://github.com/cytle/wechat_web_devtools/issues/202
    "/opt/wechat_web_devtools/bin/fix_node_sync_ipc.sh: 11: /opt/wechat_web_devtools/bin/fix_node_sync_ipc.sh: npm: not found",
    // https://github.com/Piplin/Piplin/issues/199
    "bash: line 5: npm: command not found",
  ],
  [
    "dash's wording in a script, against dash's at its prompt",
    // https://github.com/speedinghzl/CCNet/issues/56
    "build.sh: 11: build.sh: nvcc: not found",
    // https://github.com/victor-gil-sepulveda/pyRMSD/issues/16
    "sh: 1: nvcc: not found",
  ],
  [
    "git's 'Aborting' closing a reporter's quotation, against git's lines alone (the seventh set's yt2009 and AVideo reports: the one report of its group version 12 as first written left apart)",
    report("git-local-changes-overwritten-by-merge", 4),
    report("git-local-changes-overwritten-by-merge", 1),
  ],
  [
    "an addon whose file names its package, in a report cut inside its path and in a whole one (one user's two reports)",
    // https://github.com/TooTallNate/node-bindings/issues/63
    "usb_bindings.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 72. This version of Node.js requires\nNODE_MODULE_VERSION 73. Please try re-compiling or re-installing",
    // https://github.com/electron/electron/issues/21391
    "node_modules\\usb\\build\\Release\\usb_bindings.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 72. This version of Node.js requires\nNODE_MODULE_VERSION 73.",
  ],
  [
    "one package's addon on Windows (\\\\?\\ and backslashes) and on macOS",
    // https://github.com/TooTallNate/node-bindings/issues/58 against https://github.com/TooTallNate/ref/issues/118
    "Error: The module '\\\\?\\D:\\workspace\\shca-xkapp-admin\\node_modules\\ref\\build\\Release\\binding.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 64. This version of Node.js requires\nNODE_MODULE_VERSION 73. Please try re-compiling or re-installing",
    APART[1]![1],
  ],
];

describe("normalizer 12 reviewed: different errors keep their own fingerprints", () => {
  pairTests(12, APART, false);
  test("cmd.exe's Chinese wording for another command (https://github.com/mos9527/pyncm/issues/58) stays apart from python's", () => {
    const userid = "'userid' 不是内部或外部命令，也不是可运行的程序\n或批处理文件。";
    expect(normalizeError(userid, 12)).not.toBe(normalizeError(report("windows-python-not-recognized", 1), 12));
  });
  test("PowerShell's wording for another command (https://github.com/kriegalex/vscode-cuda/issues/9) stays apart from pip's", () => {
    const nvcc =
      "nvcc : The term 'nvcc' is not recognized as the name of a cmdlet, function, script file, or operable program. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.";
    expect(normalizeError(nvcc, 12)).not.toBe(normalizeError(POWERSHELL_PIP, 12));
  });
});

describe("normalizer 12 reviewed: reports of one error share a fingerprint", () => {
  pairTests(12, JOINED, true);
});

// The changed patterns against 1 MB built to make them work (CPU time: the lanes share the cores).
describe("hostile input: the reviewed patterns cost linear time", () => {
  const fill = filledMegabyte;
  const HOSTILE: [string, string][] = [
    ["PowerShell's prefix repeated", fill("x : The term 'x' is not recognized as the name of a ")],
    ["cmd.exe's Chinese wording repeated", fill("'x' 不是内部或外部命令，")],
    ["dash's script prefix repeated on one line", `${fill("a: 1: b: ")}\nnot found`],
    ["dash's script prefix repeated on lines", fill("a: 1: b: c: not\n")],
    ["a megabyte of node_modules/ before an addon", `${fill("node_modules/")}x.node' was compiled against a different Node.js version`],
    ["a command path of a megabyte of separators", `bash: ${fill("/")}: command not found`],
    ["git's 'Aborting' and a quote repeated on lines", `Aborting${fill('"x\nAborting')}`],
  ];
  linearTimeTests(HOSTILE);
});
