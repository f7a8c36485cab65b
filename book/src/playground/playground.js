// The layout playground (playground.md): every drawing, result and error message comes
// from layout-viz compiled to WebAssembly (layout-viz-wasm), the same functions the CLI
// runs; this script only reads the form, calls them, and puts their answers on the page.
// The page's state lives in its URL's hash, so a diagram can be linked.
//
// Loaded as classic scripts after generated/playground/layout_viz_wasm.js (wasm-bindgen's
// glue, global `wasm_bindgen`) and layout_viz_wasm_bytes.js (the module's bytes, base64),
// so the page works offline and opened straight from disk (file://), where neither
// fetch() nor ES modules are allowed.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  // The form's fields, by the URL key that stores each; the defaults open a hierarchical
  // layout read by a warp, one 4-byte word a lane. `used` says which views read a field:
  // the URL keeps only the current view's fields.
  const isOp = (view) => view.startsWith("op/");
  const layoutOrOp = (view) => view === "layout" || isOp(view);
  const layoutView = (view) => view === "layout";
  const FIELDS = {
    layout: { id: "pg-layout", fallback: "((2,2),8,16):((1,2),4,32)", used: layoutOrOp },
    sw: { id: "pg-swizzle", fallback: "", used: layoutOrOp },
    view: { id: "pg-view", fallback: "layout", used: () => true },
    arg: { id: "pg-arg", fallback: "", used: isOp },
    coord: { id: "pg-coord", fallback: "", used: layoutView },
    lanes: { id: "pg-lanes", fallback: "32:1", used: layoutView },
    access: { id: "pg-access", fallback: "ld32", used: layoutView },
    elem: { id: "pg-elem", fallback: "4", used: layoutOrOp },
    chunks: { id: "pg-chunks", fallback: "", used: layoutView },
    size: { id: "pg-size", fallback: "fit", used: () => true },
  };

  // A field's value as the URL stores it: a checkbox is "1" when ticked, else "".
  const valueOf = (id) => ($(id).type === "checkbox" ? ($(id).checked ? "1" : "") : $(id).value);
  function setValue(id, value) {
    if ($(id).type === "checkbox") $(id).checked = value !== "";
    else $(id).value = value;
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    for (const [key, f] of Object.entries(FIELDS)) {
      setValue(f.id, params.has(key) ? params.get(key) : f.fallback);
    }
  }

  // Only what the current view reads and differs from the defaults goes in the URL, so
  // links stay short and say only what they show.
  function writeHash() {
    const params = new URLSearchParams();
    const view = $(FIELDS.view.id).value;
    for (const [key, f] of Object.entries(FIELDS)) {
      if (f.used(view) && valueOf(f.id) !== f.fallback) params.set(key, valueOf(f.id));
    }
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  // A word as a POSIX shell would need it quoted.
  function shellWord(w) {
    return /^[A-Za-z0-9_.,:\/=-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'";
  }

  // Shows one binding's answer in the block of elements named PREFIX-*: the figure, its
  // text, the CLI command that draws the same, or the CLI's error message. On an error
  // the last good figure stays, faded, so typing through an unfinished layout does not
  // make the page jump.
  function show(prefix, answer) {
    const figure = $(prefix + "-figure");
    const error = $(prefix + "-error");
    $(prefix + "-cli").textContent = answer.cli && answer.cli.length ? "just layout " + answer.cli.map(shellWord).join(" ") : "";
    if (answer.error !== undefined) {
      error.textContent = answer.error;
      error.hidden = false;
      figure.classList.add("pg-stale");
      $(prefix + "-text").textContent = "";
      return;
    }
    error.hidden = true;
    error.textContent = "";
    figure.classList.remove("pg-stale");
    figure.innerHTML = answer.svg;
    // An operation's result drawn by its top-left window: which one (the caption says too).
    if (answer.window) figure.dataset.window = answer.window.join(",");
    else delete figure.dataset.window;
    $(prefix + "-text").textContent = answer.text || "";
  }

  // How much "fit to the column" shrinks the main figure: said above it when its labels
  // come out small, with the ways to read them.
  function noteSize(view, fit) {
    const svg = $("pg-figure").querySelector("svg");
    const drawn = svg ? Number.parseFloat(svg.getAttribute("width")) : 0;
    const shown = svg ? svg.getBoundingClientRect().width : 0;
    let note = "";
    if (fit && drawn > 0 && shown > 0 && shown < drawn * 0.99 && !$("pg-figure").classList.contains("pg-stale")) {
      const ways = view === "layout" && !valueOf("pg-chunks") ? "full size (or, for a row-major tile, 16-byte chunks)" : "full size";
      note = `Shrunk to ${Math.round((100 * shown) / drawn)}% to fit the column: hover over a cell to read it, or choose ${ways} to read its labels.`;
    }
    $("pg-note").textContent = note;
  }

  function clear(prefix) {
    for (const part of ["figure", "text", "cli", "error"]) $(prefix + "-" + part).textContent = "";
    $(prefix + "-error").hidden = true;
  }

  let catalog = null;

  function render() {
    const v = (key) => $(FIELDS[key].id).value;
    const view = v("view");
    const elem = Number.parseInt(v("elem"), 10);
    const elemBytes = Number.isFinite(elem) && elem > 0 ? elem : 0;
    const op = view.startsWith("op/") ? view.slice(3) : null;
    const usesLayout = view === "layout" || op !== null;
    $("pg-layout-fields").classList.toggle("pg-unused", !usesLayout);
    $("pg-arg-field").hidden = op === null;
    if (op !== null) {
      const usage = catalog.ops.find((o) => o.name === op)?.usage || "";
      $("pg-arg-label").textContent = usage.split(" ").slice(1).join(" ") || "(none)";
    }
    $("pg-chunks-field").hidden = view !== "layout";
    const fit = v("size") !== "full";
    for (const id of ["pg-figure", "pg-bank-figure"]) $(id).classList.toggle("pg-fit", fit);
    let main;
    if (view === "layout") {
      main = JSON.parse(wasm_bindgen.draw_layout(v("layout"), v("sw"), elemBytes, valueOf("pg-chunks") !== ""));
    } else if (op !== null) {
      main = JSON.parse(wasm_bindgen.apply_op(op, v("layout"), v("arg"), v("sw")));
    } else {
      main = JSON.parse(wasm_bindgen.draw_atom(view));
    }
    show("pg", main);
    noteSize(view, fit);
    // A swizzle that is not one is said once, above, and its field marked; the bank map
    // and the evaluation, which read it too, wait for it.
    const badSwizzle = main.field === "swizzle";
    $(FIELDS.sw.id).classList.toggle("pg-bad", badSwizzle);
    $(FIELDS.sw.id).setAttribute("aria-invalid", badSwizzle ? "true" : "false");
    // The bank map reads the typed layout, so it goes with the layout view.
    $("pg-bank").hidden = view !== "layout";
    if (view === "layout" && v("lanes").trim() !== "" && !badSwizzle) {
      show("pg-bank", JSON.parse(wasm_bindgen.draw_bank(v("layout"), v("sw"), v("lanes"), v("access"), elemBytes)));
    } else {
      clear("pg-bank");
    }
    // Evaluating reads the typed (swizzled) layout, so it goes with the layout view too.
    $("pg-coord-field").hidden = view !== "layout";
    if (view === "layout" && v("coord").trim() !== "" && !badSwizzle) {
      const answer = JSON.parse(wasm_bindgen.evaluate(v("layout"), v("coord"), v("sw")));
      $("pg-eval").textContent = answer.error !== undefined ? answer.error : "offset " + answer.text;
      $("pg-eval").classList.toggle("pg-error", answer.error !== undefined);
    } else {
      $("pg-eval").textContent = "";
      $("pg-eval").classList.remove("pg-error");
    }
    renders++;
    document.body.dataset.renders = String(renders);
  }

  // Typing redraws once the reader pauses (DEBOUNCE_MS), not on every key, so a large
  // layout does not redraw through each unfinished state; a menu or a checkbox redraws at
  // once. A redraw itself stays quick: layout-viz-wasm draws at most MAX_DRAWN (1024)
  // cells of a grid, the top-left window of a larger layout. While a
  // redraw waits, <body data-pending> says so (the browser check waits for it to go).
  const DEBOUNCE_MS = 150;
  let renders = 0;
  let timer = null;
  function renderSoon(now) {
    clearTimeout(timer);
    if (now) {
      timer = null;
      delete document.body.dataset.pending;
      render();
      return;
    }
    document.body.dataset.pending = "1";
    timer = setTimeout(() => {
      timer = null;
      delete document.body.dataset.pending;
      render();
    }, DEBOUNCE_MS);
  }

  function fillMenus() {
    const views = $("pg-view");
    const group = (label, items) => {
      const g = document.createElement("optgroup");
      g.label = label;
      for (const [value, text] of items) g.append(new Option(text, value));
      views.append(g);
    };
    group("The layout", [["layout", "draw the layout (and its swizzle)"]]);
    group("An operation on it", catalog.ops.map((o) => ["op/" + o.name, o.name + " " + o.usage]));
    const kinds = { tv: "TV atoms", mma: "MMA atoms", ldmatrix: "ldmatrix", tma: "TMA boxes", bank: "The stages' bank maps" };
    for (const [kind, label] of Object.entries(kinds)) {
      group(label, catalog.views.filter((x) => x.id.startsWith(kind + "/")).map((x) => [x.id, x.label]));
    }
    for (const a of catalog.accesses) $("pg-access").append(new Option(a, a));
  }

  // Hovering a cell shows its tooltip (coordinate and offset; thread and value; lane and
  // bank) on the line above the figures.
  function onHover(event) {
    const cell = event.target.closest && event.target.closest("g.cell");
    if (!cell) return;
    const title = cell.querySelector("title");
    if (title) $("pg-hover").textContent = title.textContent;
  }

  async function start() {
    try {
      const base64 = self.LAYOUT_VIZ_WASM_BASE64;
      if (typeof wasm_bindgen !== "function" || typeof base64 !== "string") {
        throw new Error("generated/playground/ is missing from this build of the book (`just book` writes it)");
      }
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      await wasm_bindgen({ module_or_path: bytes });
      catalog = JSON.parse(wasm_bindgen.catalog());
    } catch (e) {
      $("pg-status").textContent = "The playground could not start layout-viz: " + e.message;
      $("pg-status").classList.add("pg-error");
      return;
    }
    fillMenus();
    readHash();
    $("pg-status").hidden = true;
    $("pg-form").hidden = false;
    // The whole playground, not the form alone: the bank map's fields sit below it.
    $("playground").addEventListener("input", (event) => {
      writeHash();
      renderSoon(event.target.tagName === "SELECT" || event.target.type === "checkbox");
    });
    // A link to another state of this page (a stage chapter's, or the back button).
    window.addEventListener("hashchange", () => {
      readHash();
      renderSoon(true);
    });
    for (const id of ["pg-figure", "pg-bank-figure"]) $(id).addEventListener("mouseover", onHover);
    render();
    document.body.dataset.playground = "ready";
  }

  start();
})();
