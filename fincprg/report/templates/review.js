(function () {
  "use strict";
  var decisions = {};
  var served = location.protocol === "http:" || location.protocol === "https:";
  var status = document.getElementById("status");
  function say(msg) { status.textContent = msg; }
  function record(row, decision, score) {
    var d = {key: row.dataset.key, decision: decision, score: score,
             judge_score: row.dataset.judge === "" ? null : Number(row.dataset.judge),
             note: row.querySelector("input.note").value, time: new Date().toISOString()};
    decisions[d.key] = d;
    row.querySelector(".decided").textContent = decision === "confirm" ? "confirmed" : "override: " + score;
    row.classList.add("done");
    if (!served) { say(Object.keys(decisions).length + " decision(s) in this page; download them below"); return; }
    fetch("decisions", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(d)})
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (x) { say(x[0] ? "saved to decisions.jsonl" : "not saved: " + x[1].error); })
      .catch(function (e) { say("not saved (" + e + "); use the download button"); });
  }
  document.querySelectorAll("tr.pair").forEach(function (row) {
    row.querySelector("button.confirm").addEventListener("click", function () {
      if (row.dataset.judge === "") { say("the judge gave no score here; choose an override"); return; }
      record(row, "confirm", Number(row.dataset.judge));
    });
    row.querySelector("button.override").addEventListener("click", function () {
      record(row, "override", Number(row.querySelector("select").value));
    });
  });
  document.getElementById("download").addEventListener("click", function () {
    var lines = Object.keys(decisions).map(function (k) { return JSON.stringify(decisions[k]); });
    var blob = new Blob([lines.join("\n") + (lines.length ? "\n" : "")], {type: "application/x-ndjson"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "decisions.jsonl";
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
  say(served ? "decisions are saved to decisions.jsonl as you click" :
      "opened as a file: decisions stay in this page until you download them");
})();
