package com.example.shop;

import java.lang.annotation.Retention;
import java.util.Map;
import java.util.concurrent.*;

import static java.lang.annotation.RetentionPolicy.RUNTIME;
import static java.util.Objects.requireNonNull;

/** Marks a method whose calls are written to the audit log. */
@Retention(RUNTIME)
@interface Audited {
    String reason() default "";
}

/** A priced line of stock. */
record Item(String sku, long priceCents) {
    Item {
        if (priceCents < 0) {
            throw new IllegalArgumentException("negative price for " + sku);
        }
    }
}

/** Where an inventory change is reported. */
interface StockListener {
    void changed(String sku, int quantity);
}

/** Stock levels by SKU; listeners hear about every change. */
public class Inventory {
    enum Status { IN_STOCK, LOW, OUT }

    private final Map<String, Integer> levels;
    private final CopyOnWriteArrayList<StockListener> listeners = new CopyOnWriteArrayList<>();

    public Inventory() {
        this(new ConcurrentHashMap<>());
    }

    /** An inventory over the given (mutable) level map. */
    public Inventory(Map<String, Integer> levels) {
        this.levels = requireNonNull(levels);
    }

    public void addListener(StockListener listener) {
        listeners.add(listener);
    }

    /** Adds quantity units of sku and returns the new level. */
    @Audited(reason = "stock changes are billed")
    public int restock(String sku, int quantity) {
        int level = levels.merge(sku, quantity, Integer::sum);
        for (StockListener listener : listeners) {
            listener.changed(sku, level);
        }
        return level;
    }

    public Status status(String sku) {
        int level = levels.getOrDefault(sku, 0);
        return level == 0 ? Status.OUT : level < 5 ? Status.LOW : Status.IN_STOCK;
    }
}
