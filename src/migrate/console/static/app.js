// The migration console's interactions. The page is rendered whole on the server; this adds the
// status filter, "Hide known changes", a resource card narrowing the fields table to that
// resource, "Only requests routed differently", and the HTML and JSON exports.
"use strict";

(function () {
  function apply(section) {
    var filter = section.getAttribute("data-filter") || "all";
    var resource = section.getAttribute("data-resource") || "";
    section.querySelectorAll("tr.field").forEach(function (row) {
      var show = (filter === "all" || row.getAttribute("data-status") === filter) &&
        (resource === "" || row.getAttribute("data-resource") === resource);
      row.hidden = !show;
    });
    section.querySelectorAll(".card").forEach(function (card) {
      var statuses = (card.getAttribute("data-statuses") || "").split(" ");
      card.hidden = !(filter === "all" || statuses.indexOf(filter) >= 0);
      card.classList.toggle("selected", resource !== "" && card.getAttribute("data-resource") === resource);
    });
    section.querySelectorAll(".filter").forEach(function (b) {
      b.classList.toggle("active", b.getAttribute("data-filter") === filter);
    });
    var clear = section.querySelector(".clear-resource");
    var title = section.querySelector(".drawer-title");
    if (clear) {
      clear.hidden = resource === "";
    }
    if (title) {
      title.textContent = resource === "" ? "of every resource" : "of " + resource.replace("|", " ");
    }
  }

  function download(name, type, text) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () {
      URL.revokeObjectURL(a.href);
      a.remove();
    }, 0);
  }

  function exportReport(section, format) {
    var ok = window.confirm(
      "The exported file holds the full configuration of both plans and can be read " +
      "without access to the cluster. Export?");
    if (!ok) {
      return;
    }
    var ns = section.getAttribute("data-namespace");
    var gw = section.getAttribute("data-gateway");
    var query = "?namespace=" + encodeURIComponent(ns) + "&gateway=" + encodeURIComponent(gw);
    var base = "migration-" + ns + "-" + gw;
    if (format === "json") {
      Promise.all([
        fetch("/api/diff" + query).then(function (r) { return r.json(); }),
        fetch("/api/verify" + query).then(function (r) { return r.json(); })
      ]).then(function (parts) {
        var body = {
          namespace: ns,
          gateway: gw,
          timestamp: new Date().toISOString(),
          diff: parts[0],
          verify: parts[1]
        };
        download(base + ".json", "application/json", JSON.stringify(body, null, 2));
      });
      return;
    }
    fetch("/static/style.css").then(function (r) { return r.text(); }).then(function (css) {
      var copy = section.cloneNode(true);
      copy.querySelectorAll("[hidden]").forEach(function (e) { e.hidden = false; });
      copy.querySelectorAll(".toolbar, .clear-resource").forEach(function (e) { e.remove(); });
      copy.classList.remove("hide-known");
      var html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
        "<title>Migration report " + ns + "/" + gw + "</title><style>" + css + "</style></head>" +
        "<body><main><p class=\"alert info\">Exported " + new Date().toISOString() + "</p>" +
        copy.outerHTML + "</main></body></html>\n";
      download(base + ".html", "text/html", html);
    });
  }

  function init(section) {
    section.querySelectorAll(".filter").forEach(function (b) {
      b.addEventListener("click", function () {
        var f = b.getAttribute("data-filter");
        // Clicking the active filter goes back to every field.
        var current = section.getAttribute("data-filter") || "all";
        section.setAttribute("data-filter", current === f ? "all" : f);
        apply(section);
      });
    });
    section.querySelectorAll(".card").forEach(function (card) {
      card.addEventListener("click", function () {
        var r = card.getAttribute("data-resource");
        var current = section.getAttribute("data-resource") || "";
        section.setAttribute("data-resource", current === r ? "" : r);
        apply(section);
        var drawer = section.querySelector(".drawer");
        if (drawer && section.getAttribute("data-resource")) {
          drawer.scrollIntoView({ behavior: "smooth", block: "start" });
        }
      });
    });
    var clear = section.querySelector(".clear-resource");
    if (clear) {
      clear.addEventListener("click", function () {
        section.setAttribute("data-resource", "");
        apply(section);
      });
    }
    var known = section.querySelector(".hide-known-toggle");
    if (known) {
      known.addEventListener("change", function () {
        section.classList.toggle("hide-known", known.checked);
      });
    }
    var only = section.querySelector(".only-differing");
    if (only) {
      only.addEventListener("change", function () {
        section.classList.toggle("only-differing-on", only.checked);
      });
    }
    section.querySelectorAll(".export").forEach(function (b) {
      b.addEventListener("click", function () {
        exportReport(section, b.getAttribute("data-format"));
      });
    });
    apply(section);
  }

  function start() {
    document.querySelectorAll("section.gateway").forEach(init);
    // Tells a reader of the DOM (the browser test) that the interactions are wired.
    document.documentElement.setAttribute("data-console-ready", "true");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
